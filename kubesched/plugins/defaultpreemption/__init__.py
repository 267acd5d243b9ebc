"""DefaultPreemption (upstream's ``defaultpreemption`` plugin): see ``plugin.py``."""

from .args import DefaultPreemptionArgs, parse_args
from .executor import Executor, GroupVictimEvictor, Preemptor, VictimEvictor
from .plugin import NAME, DefaultPreemption, new

__all__ = ["NAME", "DefaultPreemption", "DefaultPreemptionArgs", "Executor", "GroupVictimEvictor", "Preemptor",
           "VictimEvictor", "parse_args", "new"]
