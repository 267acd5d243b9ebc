"""``scheduling.k8s.io/v1alpha2`` PodGroup and Workload as the scheduler reads them.

Workload-aware scheduling (KEP-4671, alpha in v1.36 behind GenericWorkload) schedules the
pods of a PodGroup as one unit: a gang (``schedulingPolicy.gang.minCount``) binds nothing
until ``minCount`` of its pods fit; a basic group is scheduled in one group cycle without
that guarantee; ``schedulingConstraints.topology`` keeps the whole group inside one domain
of a node label (TopologyAwareWorkloadScheduling). A pod names its group in
``spec.schedulingGroup.podGroupName`` (``PodInfo.pod_group_name``).

The records are parsed once from the API's JSON (``parse_pod_group``, ``parse_workload``),
after the checks the API server makes (``podgroup_validation``): an object it would refuse
raises ``ObjectError`` naming the first bad field. The scheduler never reads the raw
document again except to write the ``PodGroupScheduled`` condition back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import ObjectError
from .podgroup_validation import ALL_GATES, pod_group_problems, workload_problems

__all__ = [
    "DISRUPTION_MODE_POD",
    "DISRUPTION_MODE_POD_GROUP",
    "POD_GROUP_SCHEDULED",
    "PodGroup",
    "PodGroupCondition",
    "PodGroupResourceClaim",
    "PodGroupTemplate",
    "Workload",
    "parse_pod_group",
    "parse_workload",
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
    # ``schedulingConstraints`` present at all (even with no topology), as upstream tests it.
    has_scheduling_constraints: bool = False


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
    # ``spec.schedulingConstraints`` present at all (even with no topology): upstream's
    # DefaultPreemption tests ``Spec.SchedulingConstraints != nil``.
    has_scheduling_constraints: bool = False
    creation_timestamp: str | None = None  # RFC 3339, as the API server returns it

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


def _first_problem(problems: list[tuple[str, str]]) -> None:
    if problems:
        raise ObjectError(*problems[0])


def _meta(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = raw.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _claims(raw: Any) -> tuple[PodGroupResourceClaim, ...]:
    return tuple(PodGroupResourceClaim(c["name"], c.get("resourceClaimName"), c.get("resourceClaimTemplateName"))
                 for c in raw or ())


def _policy(raw: Any) -> int | None:
    gang = (raw or {}).get("gang")
    return int(gang["minCount"]) if gang is not None else None


def _topology(raw: Any) -> tuple[str, ...]:
    return tuple(c["key"] for c in (raw or {}).get("topology") or ())


def _condition(raw: Mapping[str, Any]) -> PodGroupCondition:
    return PodGroupCondition(raw["type"], raw["status"], raw["reason"], raw.get("message") or "",
                             raw.get("observedGeneration") or 0, raw.get("lastTransitionTime"))


def parse_pod_group(raw: Mapping[str, Any], keep_raw: bool = True,
                    gates: frozenset[str] = ALL_GATES) -> PodGroup:
    """A PodGroup as the API server would store it (``disruptionMode`` defaulted to ``Pod``);
    ``ObjectError`` for the first problem it would refuse the object for. ``gates``: the
    alpha gates whose fields it accepts (see ``podgroup_validation``)."""
    _first_problem(pod_group_problems(raw, gates))
    meta = _meta(raw)
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    ref = (spec.get("podGroupTemplateRef") or {}).get("workload")
    constraints = spec.get("schedulingConstraints")
    return PodGroup(
        namespace=meta.get("namespace") or "default",
        name=meta["name"],
        uid=str(meta.get("uid") or ""),
        generation=int(meta.get("generation") or 0),
        resource_version=str(meta.get("resourceVersion") or ""),
        min_count=_policy(spec.get("schedulingPolicy")),
        topology_keys=_topology(constraints),
        workload_name=ref["workloadName"] if ref is not None else None,
        template_name=ref["podGroupTemplateName"] if ref is not None else None,
        priority_class_name=spec.get("priorityClassName") or "",
        priority=spec.get("priority"),
        disruption_mode=spec.get("disruptionMode") or DISRUPTION_MODE_POD,
        resource_claims=_claims(spec.get("resourceClaims")),
        conditions=tuple(_condition(c) for c in status.get("conditions") or ()),
        resource_claim_statuses=tuple((s["name"], s.get("resourceClaimName"))
                                      for s in status.get("resourceClaimStatuses") or ()),
        raw=raw if keep_raw else None,
        has_scheduling_constraints=constraints is not None,
        creation_timestamp=meta.get("creationTimestamp"),
    )


def parse_workload(raw: Mapping[str, Any], keep_raw: bool = True,
                   gates: frozenset[str] = ALL_GATES) -> Workload:
    """A Workload, or ``ObjectError`` for the first problem the API server would refuse it for."""
    _first_problem(workload_problems(raw, gates))
    meta = _meta(raw)
    spec = raw.get("spec") or {}
    controller = spec.get("controllerRef")
    templates = tuple(
        PodGroupTemplate(
            name=t["name"],
            min_count=_policy(t.get("schedulingPolicy")),
            topology_keys=_topology(t.get("schedulingConstraints")),
            resource_claims=_claims(t.get("resourceClaims")),
            disruption_mode=t.get("disruptionMode"),
            priority_class_name=t.get("priorityClassName") or "",
            priority=t.get("priority"),
            has_scheduling_constraints=t.get("schedulingConstraints") is not None,
        )
        for t in spec.get("podGroupTemplates") or ()
    )
    return Workload(
        namespace=meta.get("namespace") or "default",
        name=meta["name"],
        uid=str(meta.get("uid") or ""),
        templates=templates,
        controller_ref=(controller.get("apiGroup") or "", controller["kind"], controller["name"])
        if controller is not None else None,
        raw=raw if keep_raw else None,
    )
