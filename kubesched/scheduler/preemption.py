"""Wiring preemption into a scheduler: the nominator, and the frameworks the plugin needs.

Upstream's DefaultPreemption reaches the framework it runs in and the queue's
nominator through its handle; here the scheduler hands both to every preemption
plugin once its profiles are built, and gives the algorithm the same nominator so
filtering counts nominated pods (``framework.preemption.apply_nominated_pods``).
"""

from __future__ import annotations

from typing import Any

from ..framework.preemption import PreemptionOutcome
from ..framework.runtime import Framework
from ..plugins.defaultpreemption import DefaultPreemption
from ..queue.nominator import Nominator
from .algorithm import Algorithm

__all__ = ["attach_preemption", "post_filter_record"]


def attach_preemption(profiles: dict[str, Framework], algorithm: Algorithm, nominator: Nominator) -> None:
    for fwk in profiles.values():
        for plugin in fwk.points["postFilter"]:
            if isinstance(plugin, DefaultPreemption):
                plugin.attach(fwk, nominator, algorithm.tie_break, algorithm.rng)
    algorithm.nominator = nominator


def post_filter_record(outcome: PreemptionOutcome | None, status_message: str | None) -> dict[str, Any] | None:
    """The explain output's ``postFilter`` object; None when no PostFilter plugin preempted.

    ``status_message`` is the whole PostFilter status message (every plugin's reasons)."""
    if outcome is None:
        return None
    return {
        "code": outcome.code.label,
        "message": status_message if status_message is not None else outcome.message,
        "nominatedNode": outcome.nominated_node,
        "victims": sorted(v.key for v in outcome.victims),
        "tiedCandidates": list(outcome.tied),
    }
