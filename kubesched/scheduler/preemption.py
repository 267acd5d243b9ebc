"""Wiring preemption into a scheduler: the nominator, the framework and the extenders.

Upstream's DefaultPreemption reaches the framework it runs in, the queue's nominator
and the HTTP extenders through its handle; here the scheduler hands them to every
preemption plugin once its profiles are built, and gives the algorithm the same
nominator so filtering counts nominated pods (``framework.preemption.apply_nominated_pods``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..framework.preemption import Candidate, CandidateFilter, PreemptionOutcome
from ..framework.runtime import Framework
from ..framework.status import Code, Status
from ..framework.views import SnapshotView
from ..objects.pod import PodInfo
from ..plugins.defaultpreemption import DefaultPreemption
from ..queue.nominator import Nominator
from .algorithm import Algorithm
from .extender_client import NodeInfoLister, Victims

__all__ = ["attach_preemption", "extenders_filter", "post_filter_record", "PreemptionExtender"]


class PreemptionExtender(Protocol):
    """What preemption asks of an HTTP extender (``HTTPExtender``)."""

    @property
    def name(self) -> str: ...

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: PodInfo) -> bool: ...

    def is_ignorable(self) -> bool: ...

    def process_preemption(self, pod: PodInfo, victims: dict[str, Victims], node_infos: NodeInfoLister) -> dict[str, Victims]: ...


def extenders_filter(extenders: Sequence[PreemptionExtender], snapshot: SnapshotView) -> CandidateFilter:
    """upstream's ``callExtenders``: each preemption-capable extender interested in the pod
    narrows the candidates (node -> victims) in turn; an ignorable one that fails, or
    leaves a node without victims, is skipped or loses that node, another one fails the
    preemption."""

    def keep(pod: PodInfo, candidates: list[Candidate]) -> list[Candidate] | Status:
        victims = {c.node: Victims(list(c.victims), c.pdb_violations) for c in candidates}
        if not victims:
            return candidates
        for extender in extenders:
            if not extender.supports_preemption() or not extender.is_interested(pod):
                continue
            try:
                answer = extender.process_preemption(pod, victims, snapshot)
            except Exception as err:  # noqa: BLE001 - the extender's failure is the status
                if extender.is_ignorable():
                    continue
                return Status(Code.ERROR, str(err))
            for node, kept in list(answer.items()):
                if kept is None or not kept.pods:
                    if extender.is_ignorable():
                        del answer[node]
                        continue
                    return Status(Code.ERROR, f'expected at least one victim pod on node "{node}"')
            victims = answer
            if not victims:
                break
        return [Candidate(node, list(v.pods), v.num_pdb_violations) for node, v in victims.items()]

    return keep


def attach_preemption(profiles: dict[str, Framework], algorithm: Algorithm, nominator: Nominator,
                      snapshot: SnapshotView | None = None, observe_victims: Callable[[int], None] | None = None) -> None:
    extenders = [e for e in algorithm.extenders if e.supports_preemption()]
    for fwk in profiles.values():
        for plugin in fwk.points["postFilter"]:
            if isinstance(plugin, DefaultPreemption):
                candidates = extenders_filter(extenders, snapshot) if extenders and snapshot is not None else None
                # The heap tie-break is deterministic: so is its preemption (smallest name among ties).
                tie_break = "name" if algorithm.tie_break == "heap" else algorithm.tie_break
                plugin.attach(fwk, nominator, tie_break, algorithm.rng, candidates, observe_victims)
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
