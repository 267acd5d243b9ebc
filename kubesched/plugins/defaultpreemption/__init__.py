"""DefaultPreemption (upstream's ``defaultpreemption`` plugin): see ``plugin.py``."""

from .args import DefaultPreemptionArgs, parse_args
from .plugin import NAME, DefaultPreemption, VictimEvictor, new

__all__ = ["NAME", "DefaultPreemption", "DefaultPreemptionArgs", "VictimEvictor", "parse_args", "new"]
