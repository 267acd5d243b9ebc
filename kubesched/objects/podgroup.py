"""``scheduling.k8s.io/v1alpha2`` PodGroup and Workload as the scheduler reads them.

Workload-aware scheduling (KEP-4671, alpha in v1.36 behind GenericWorkload) schedules the
pods of a PodGroup as one unit: a gang (``schedulingPolicy.gang.minCount``) binds nothing
until ``minCount`` of its pods fit; a basic group is scheduled in one group cycle without
that guarantee; ``schedulingConstraints.topology`` keeps the whole group inside one domain
of a node label (TopologyAwareWorkloadScheduling). A pod names its group in
``spec.schedulingGroup.podGroupName`` (``PodInfo.pod_group_name``).

The records are parsed once from the API's JSON; the scheduler never reads the raw
document again except to write the ``PodGroupScheduled`` condition back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = [
    "DISRUPTION_MODE_POD",
    "DISRUPTION_MODE_POD_GROUP",
    "POD_GROUP_SCHEDULED",
    "PodGroup",
    "PodGroupCondition",
    "PodGroupResourceClaim",
    "PodGroupTemplate",
    "Workload",
]

# The condition type the scheduler sets on a PodGroup, and its reasons (v1alpha2 constants).
POD_GROUP_SCHEDULED = "PodGroupScheduled"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"

DISRUPTION_MODE_POD = "Pod"
DISRUPTION_MODE_POD_GROUP = "PodGroup"


@dataclass(slots=True, frozen=True)
class PodGroupCondition:
    """A ``metav1.Condition`` of ``status.conditions``."""

    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str = ""
    observed_generation: int = 0
    last_transition_time: str | None = None  # RFC 3339, as the API server returns it


@dataclass(slots=True, frozen=True)
class PodGroupResourceClaim:
    """One ``spec.resourceClaims`` entry (DRAWorkloadResourceClaims): a claim by name or a template."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(slots=True, frozen=True)
class PodGroupTemplate:
    """One ``Workload.spec.podGroupTemplates`` entry: what PodGroups made from it carry."""

    name: str
    min_count: int | None  # gang minCount; None for the basic policy
    topology_keys: tuple[str, ...] = ()
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    disruption_mode: str | None = None
    priority_class_name: str = ""
    priority: int | None = None


@dataclass(slots=True, frozen=True)
class PodGroup:
    """A ``PodGroup``: the runtime instance of a group of pods scheduled together."""

    namespace: str
    name: str
    uid: str
    generation: int
    resource_version: str
    # ``spec.schedulingPolicy``: gang ``minCount``, or None for the basic policy.
    min_count: int | None
    # ``spec.schedulingConstraints.topology[*].key`` (v1.36 allows at most one).
    topology_keys: tuple[str, ...] = ()
    # ``spec.podGroupTemplateRef.workload``.
    workload_name: str | None = None
    template_name: str | None = None
    priority_class_name: str = ""
    priority: int | None = None
    disruption_mode: str | None = None
    resource_claims: tuple[PodGroupResourceClaim, ...] = ()
    conditions: tuple[PodGroupCondition, ...] = ()
    # ``status.resourceClaimStatuses``: entry name -> claim name (None: none made).
    resource_claim_statuses: tuple[tuple[str, str | None], ...] = ()
    raw: Mapping[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_gang(self) -> bool:
        return self.min_count is not None

    def condition(self, type_: str) -> PodGroupCondition | None:
        for cond in self.conditions:
            if cond.type == type_:
                return cond
        return None


@dataclass(slots=True, frozen=True)
class Workload:
    """A ``Workload``: the templates its controller stamps PodGroups from."""

    namespace: str
    name: str
    uid: str
    templates: tuple[PodGroupTemplate, ...]
    # ``spec.controllerRef``: (apiGroup, kind, name), or None.
    controller_ref: tuple[str, str, str] | None = None
    raw: Mapping[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
