"""scheduling.k8s.io/v1alpha2: what kube-apiserver v1.36.2 does to PodGroups, Workloads and a
pod's ``spec.schedulingGroup`` before storing them.

The registries (pkg/registry/scheduling/podgroup, workload) and their validation:

* Both kinds are served only with the GenericWorkload gate on (``storage_scheduling.go``:
  no storage, so no path and no discovery entry, without it).
* PodGroup create: ``status`` reset to ``{}`` (``PrepareForCreate``), ``spec.disruptionMode``
  defaulted to ``Pod``, fields of disabled gates dropped (``dropDisabledPodGroupFields``),
  then validated (``kubesched.objects.podgroup_validation``, which carries the declarative
  rules over). Workload create: the same for each template, without a default.
* Updates of the main resource keep the stored status; every spec field is immutable
  (``+k8s:immutable``: ``Invalid value: null: field is immutable`` at the field).
* ``podgroups/status`` keeps the stored spec and metadata (``ResetObjectMetaForStatus``)
  and validates the conditions and claim statuses (``ValidatePodGroupStatusUpdate``).
* Neither strategy manages ``metadata.generation``: the creator's value is kept and no
  update changes it (``rest.BeforeUpdate``), so a PodGroup created without one has none.
* Pods: ``spec.schedulingGroup`` is validated (``validateSchedulingGroup``) with the gate on
  and dropped with it off (``dropDisabledSchedulingGroup``).

Errors are 422 ``Invalid`` with upstream's field paths and wording; a value of the wrong
JSON type is the decoder's 400.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.objects.podgroup_validation import (
    ALL_GATES,
    pod_group_problems,
    scheduling_group_problems,
    workload_problems,
)
from tests.apiserver import errors
from tests.apiserver.resources import BY_PATH, Resource
from tests.apiserver.storage import JSONDict, meta

GROUP = "scheduling.k8s.io"
VERSION = "v1alpha2"
POD_GROUPS = BY_PATH[(GROUP, VERSION, "podgroups")]
WORKLOADS = BY_PATH[(GROUP, VERSION, "workloads")]
GENERIC_WORKLOAD = "GenericWorkload"
TOPOLOGY = "TopologyAwareWorkloadScheduling"
PREEMPTION = "WorkloadAwarePreemption"
CLAIMS = "DRAWorkloadResourceClaims"
# The test server's default: a cluster set up for workload-aware scheduling (every gate on).
DEFAULT_GATES = frozenset({GENERIC_WORKLOAD, *ALL_GATES})

# field.Error's type names, as a message starts, and their Status cause reasons.
_REASONS = (
    ("Required value", "FieldValueRequired"),
    ("Invalid value", "FieldValueInvalid"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Too many", "FieldValueTooMany"),
    ("Too long", "FieldValueTooLong"),
    ("Forbidden", "FieldValueForbidden"),
)
# Spec fields in declaration order, each immutable (with the gate that makes it so, if any).
_POD_GROUP_SPEC = (("podGroupTemplateRef", None), ("schedulingPolicy", None), ("schedulingConstraints", TOPOLOGY),
                   ("resourceClaims", None), ("disruptionMode", PREEMPTION), ("priorityClassName", PREEMPTION),
                   ("priority", PREEMPTION))
_WORKLOAD_SPEC = (("controllerRef", None), ("podGroupTemplates", None))
# What dropDisabled*Fields remove, per gate (a PodGroup's spec and each Workload template alike).
_GATED_FIELDS = ((TOPOLOGY, ("schedulingConstraints",)), (CLAIMS, ("resourceClaims",)),
                 (PREEMPTION, ("disruptionMode", "priorityClassName", "priority")))


def is_workload_kind(resource: Resource) -> bool:
    return resource is POD_GROUPS or resource is WORKLOADS


def served(resource: Resource, gates: frozenset[str]) -> bool:
    """Whether a server with these gates has storage for ``resource``."""
    return not (resource.group == GROUP and resource.version == VERSION) or GENERIC_WORKLOAD in gates


def keeps_creator_generation(resource: Resource) -> bool:
    """Strategies that never set ``metadata.generation`` keep what the creator sent."""
    return is_workload_kind(resource)


def _dict(value: object) -> JSONDict:
    return value if isinstance(value, dict) else {}


def _cause(path: str, message: str) -> tuple[str, str, str] | None:
    for prefix, reason in _REASONS:
        if message.startswith(prefix):
            return reason, path, message
    return None


def _raise(resource: Resource, obj: Mapping[str, object], problems: list[tuple[str, str]]) -> None:
    if not problems:
        return
    name = str(_dict(obj.get("metadata")).get("name") or "")
    causes = [_cause(path, message) for path, message in problems]
    if any(c is None for c in causes):  # the decoder's refusal, before any validation
        path, message = problems[0]
        raise errors.bad_request(f'{resource.kind} in version "{resource.version}" cannot be handled as a '
                                 f"{resource.kind}: {path}: {message}")
    raise errors.invalid(resource.group, resource.kind, name, [c for c in causes if c is not None])


def _in_use(old: Mapping[str, object] | None, field: str) -> bool:
    if old is None:
        return False
    value = old.get(field)
    return value not in (None, "", [])


def _drop_disabled(spec: JSONDict, old: Mapping[str, object] | None, gates: frozenset[str]) -> None:
    """dropDisabled*Fields: a gated field goes unless its gate is on or the old object uses it."""
    for gate, fields in _GATED_FIELDS:
        if gate in gates:
            continue
        for field in fields:
            if not _in_use(old, field):
                spec.pop(field, None)


def _default_pod_group(spec: JSONDict) -> None:
    spec.setdefault("disruptionMode", "Pod")  # +default="Pod", before the gate drops it


def _validation_gates(gates: frozenset[str]) -> frozenset[str]:
    return frozenset(g for g in gates if g in ALL_GATES)


def _immutable(new_spec: Mapping[str, object], old_spec: Mapping[str, object],
               fields: tuple[tuple[str, str | None], ...], gates: frozenset[str]) -> list[tuple[str, str]]:
    return [(f"spec.{field}", "Invalid value: null: field is immutable") for field, gate in fields
            if (gate is None or gate in gates) and new_spec.get(field) != old_spec.get(field)]


def admit_create(gates: frozenset[str], resource: Resource, obj: JSONDict, keep_status: bool) -> None:
    """Defaults, dropped fields and validation of a new PodGroup or Workload (``keep_status``:
    the test API seeding state, status and all)."""
    spec = obj.get("spec")
    if resource is POD_GROUPS:
        if not keep_status:
            obj["status"] = {}  # PrepareForCreate: status must not be set by the user
        if isinstance(spec, dict):
            _default_pod_group(spec)
            _drop_disabled(spec, None, gates)
        _raise(resource, obj, pod_group_problems(obj, _validation_gates(gates)))
        return
    obj.pop("status", None)  # a Workload has none: the decoder drops the unknown field
    for template in _dict(spec).get("podGroupTemplates") or ():
        if isinstance(template, dict):
            _drop_disabled(template, None, gates)
    _raise(resource, obj, workload_problems(obj, _validation_gates(gates)))


def admit_update(gates: frozenset[str], resource: Resource, new: JSONDict, old: JSONDict,
                 subresource: str | None) -> JSONDict:
    """The object to store for an update of a PodGroup or Workload (``new``: the endpoint's
    merge of the request into the stored object), or Invalid."""
    new_meta, old_meta = meta(new), meta(old)
    if "generation" in old_meta:  # rest.BeforeUpdate: requests cannot update generation
        new_meta["generation"] = old_meta["generation"]
    else:
        new_meta.pop("generation", None)
    if subresource == "status":
        return _pod_group_status(gates, new, old)
    new_spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    checks = _validation_gates(gates)
    if resource is POD_GROUPS:
        if isinstance(new.get("spec"), dict):
            _default_pod_group(new_spec)
            _drop_disabled(new_spec, old_spec, gates)
        problems = pod_group_problems(new, checks) + _immutable(new_spec, old_spec, _POD_GROUP_SPEC, gates)
    else:
        new.pop("status", None)
        old_templates = [t for t in old_spec.get("podGroupTemplates") or () if isinstance(t, dict)]
        for i, template in enumerate(new_spec.get("podGroupTemplates") or ()):
            if isinstance(template, dict):
                _drop_disabled(template, old_templates[i] if i < len(old_templates) else None, gates)
        problems = workload_problems(new, checks) + _immutable(new_spec, old_spec, _WORKLOAD_SPEC, gates)
    _raise(resource, new, problems)
    return new


def _pod_group_status(gates: frozenset[str], new: JSONDict, old: JSONDict) -> JSONDict:
    """podGroupStatusStrategy: the stored spec and metadata with the request's status, then
    ValidatePodGroupStatusUpdate (conditions, claim statuses)."""
    out: JSONDict = {**old, "status": new.get("status") if isinstance(new.get("status"), dict) else {}}
    out["metadata"] = dict(meta(old))
    status = _dict(out["status"])
    if CLAIMS not in gates and not _in_use(_dict(old.get("spec")), "resourceClaims"):
        status.pop("resourceClaimStatuses", None)
    problems = [p for p in pod_group_problems(out, _validation_gates(gates)) if p[0].startswith("status")]
    _raise(POD_GROUPS, out, problems)
    return out


def admit_pod_scheduling_group(gates: frozenset[str], pod: JSONDict) -> None:
    """A new pod's ``spec.schedulingGroup``: dropped with GenericWorkload off, else validated."""
    spec = pod.get("spec")
    if not isinstance(spec, dict) or "schedulingGroup" not in spec:
        return
    if GENERIC_WORKLOAD not in gates:
        spec.pop("schedulingGroup", None)
        return
    problems = scheduling_group_problems(spec)
    if problems:
        causes = [_cause(path, message) for path, message in problems]
        name = str(meta(pod).get("name") or "")
        if any(c is None for c in causes):
            raise errors.bad_request(f'Pod in version "v1" cannot be handled as a Pod: {problems[0][0]}: '
                                     f"{problems[0][1]}")
        raise errors.invalid("", "Pod", name, [c for c in causes if c is not None])
