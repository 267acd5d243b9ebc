"""PodDisruptionBudgets as preemption reads them (policy/v1).

Preemption never changes a budget (the disruption controller does, later); it only
asks which victims would take a budget below zero, so that those are reprieved first
and a node whose victims violate fewer budgets is preferred.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...objects.errors import ObjectError
from ...objects.pod import PodInfo
from ...objects.selectors import LabelSelector, parse_label_selector

__all__ = ["PDB_API_VERSION", "PDB_KIND", "PDB_PLURAL", "DisruptionBudget", "parse_pdb", "split_by_pdb_violation"]

PDB_API_VERSION = "policy/v1"
PDB_KIND = "PodDisruptionBudget"
PDB_PLURAL = "poddisruptionbudgets"


@dataclass(slots=True, frozen=True)
class DisruptionBudget:
    """What preemption reads of a PDB; ``selector`` None when it selects no pod (nil,
    empty or invalid: upstream counts such budgets for no pod)."""

    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    def covers(self, pod: PodInfo) -> bool:
        return self.selector is not None and pod.namespace == self.namespace and self.selector.matches(pod.labels)


def parse_pdb(obj: Mapping[str, object]) -> DisruptionBudget:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    status = obj.get("status")
    status = status if isinstance(status, Mapping) else {}
    selector: LabelSelector | None
    try:
        selector = parse_label_selector(spec.get("selector"), "spec.selector")
    except ObjectError:
        selector = None  # an invalid selector matches no pod
    if selector is not None and (selector.nothing or selector.is_empty()):
        selector = None
    allowed = status.get("disruptionsAllowed")
    disrupted = status.get("disruptedPods")
    return DisruptionBudget(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta.get("name") or ""),
        selector=selector,
        disruptions_allowed=allowed if isinstance(allowed, int) else 0,
        disrupted_pods=frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset(),
    )


def split_by_pdb_violation(pods: Sequence[PodInfo], pdbs: Sequence[DisruptionBudget]) -> tuple[list[PodInfo], list[PodInfo]]:
    """``(violating, non_violating)``, each in the order given: a pod violates when taking
    it (after the pods before it) leaves one of its budgets below zero. A pod the budget
    already lists as disrupted does not use it up again."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    fine: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not pdb.covers(pod) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else fine).append(pod)
    return violating, fine
