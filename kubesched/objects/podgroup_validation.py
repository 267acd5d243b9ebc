"""What the API server refuses in a ``scheduling.k8s.io/v1alpha2`` PodGroup or Workload, and
in ``Pod.spec.schedulingGroup``.

The rules are v1.36's: ``pkg/apis/scheduling/validation`` (metadata; a status's claim
entries must name a ``spec.resourceClaims`` entry), the declarative rules generated for
v1alpha2 (``+k8s:required``, ``+k8s:minimum``, unions, formats, ``+k8s:maxItems``, list map
keys), ``metav1`` condition validation for ``status.conditions``, and
``pkg/apis/core/validation`` for a pod's ``schedulingGroup``. Each problem is
``(field path, message)`` with the message worded and rendered as ``field.Error`` renders it.

Defaults are applied first, as the API server applies them before validating
(``spec.disruptionMode`` of a PodGroup defaults to ``Pod``). A value of the wrong JSON type
is a decoding error upstream, reported alone; here too (``must be an integer``, ...).

``gates``: the alpha gates whose fields the API server accepts. Upstream forbids
``schedulingConstraints`` without TopologyAwareWorkloadScheduling and ``disruptionMode``,
``priorityClassName``, ``priority`` without WorkloadAwarePreemption. A snapshot holds what
an API server stored (it drops such fields when their gate is off rather than refusing
them), so snapshots are checked with every gate on (``ALL_GATES``); ``kubesched`` then
ignores a field whose gate is off, as upstream's scheduler never sees it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .api_messages import (
    Problem,
    dns1123_label,
    dns1123_subdomain,
    duplicate,
    forbidden,
    invalid,
    label_key,
    not_supported,
    path_segment_name,
    regex_error,
    required,
    too_many,
)

__all__ = [
    "ALL_GATES",
    "DISRUPTION_MODES",
    "HIGHEST_USER_DEFINABLE_PRIORITY",
    "MAX_POD_GROUP_RESOURCE_CLAIMS",
    "WORKLOAD_MAX_POD_GROUP_TEMPLATES",
    "Problem",
    "pod_group_problems",
    "scheduling_group_problems",
    "workload_problems",
]

TOPOLOGY_GATE = "TopologyAwareWorkloadScheduling"
PREEMPTION_GATE = "WorkloadAwarePreemption"
ALL_GATES = frozenset({TOPOLOGY_GATE, PREEMPTION_GATE, "DRAWorkloadResourceClaims"})

WORKLOAD_MAX_POD_GROUP_TEMPLATES = 8
MAX_POD_GROUP_RESOURCE_CLAIMS = 4
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
DISRUPTION_MODES = ("Pod", "PodGroup")
_INT32 = (-(1 << 31), (1 << 31) - 1)


class DecodeError(Exception):
    """A value of the wrong JSON type: the API server cannot decode the object at all."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


# -- reading raw JSON the way Go's decoder would ------------------------------------------

def _map(raw: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise DecodeError(path, "must be an object")
    return value


def _str(raw: Mapping[str, Any], key: str, path: str) -> str | None:
    value = raw.get(key)
    if value is None or isinstance(value, str):
        return value
    raise DecodeError(path, "must be a string")


def _int32(raw: Mapping[str, Any], key: str, path: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(path, "must be an integer")
    if not _INT32[0] <= value <= _INT32[1]:
        raise DecodeError(path, "must be a 32-bit integer")
    return value


def _int64(raw: Mapping[str, Any], key: str, path: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(path, "must be an integer")
    return value


def _list(raw: Mapping[str, Any], key: str, path: str) -> list[Any]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise DecodeError(path, "must be a list")
    return value


def _items(values: list[Any], path: str) -> list[Mapping[str, Any]]:
    for i, item in enumerate(values):
        if not isinstance(item, Mapping):
            raise DecodeError(f"{path}[{i}]", "must be an object")
    return values


def _format(out: list[Problem], path: str, value: str, check: Callable[[str], list[str]]) -> None:
    out.extend(invalid(path, value, message) for message in check(value))


def _long_name(value: str) -> list[str]:
    return dns1123_subdomain(value, "bytes")


def _short_name(value: str) -> list[str]:
    return dns1123_label(value, "bytes")


# -- the pieces both kinds share -------------------------------------------------------------

def _metadata(raw: Mapping[str, Any], out: list[Problem]) -> None:
    """``ValidateObjectMeta`` for a namespaced object whose name is a DNS subdomain (the
    namespace may be left out of a snapshot, as ``kubectl apply`` fills it in)."""
    meta = _map(raw, "metadata", "metadata") or {}
    name = _str(meta, "name", "metadata.name") or ""
    if not name:
        out.append(required("metadata.name", "name or generateName is required"))
    else:
        _format(out, "metadata.name", name, lambda v: dns1123_subdomain(v, "characters"))
    namespace = _str(meta, "namespace", "metadata.namespace")
    if namespace:
        _format(out, "metadata.namespace", namespace, lambda v: dns1123_label(v, "characters"))


def _union(out: list[Problem], path: str, members: Iterable[tuple[str, bool]]) -> None:
    """``validate.Union``: exactly one member set."""
    names = [name for name, _ in members]
    chosen = [name for name, is_set in members if is_set]
    every = ", ".join(f"`{name}`" for name in names)
    if len(chosen) > 1:
        out.append(invalid(path, "{" + ", ".join(chosen) + "}", f"must specify exactly one of: {every}"))
    elif not chosen:
        out.append(invalid(path, "", f"must specify one of: {every}"))


def _scheduling_policy(policy: Mapping[str, Any] | None, path: str, out: list[Problem]) -> None:
    policy = policy or {}
    basic = _map(policy, "basic", f"{path}.basic")
    gang = _map(policy, "gang", f"{path}.gang")
    _union(out, path, (("basic", basic is not None), ("gang", gang is not None)))
    if gang is not None:
        min_count = _int32(gang, "minCount", f"{path}.gang.minCount") or 0
        if min_count == 0:  # declarative validation reads 0 as "not set"
            out.append(required(f"{path}.gang.minCount"))
        elif min_count < 1:
            out.append(invalid(f"{path}.gang.minCount", min_count, "must be greater than or equal to 1"))


def _scheduling_constraints(parent: Mapping[str, Any], path: str, gates: frozenset[str], out: list[Problem]) -> None:
    constraints = _map(parent, "schedulingConstraints", path)
    if constraints is None:
        return
    if TOPOLOGY_GATE not in gates:
        out.append(forbidden(path))
        return
    topology = _items(_list(constraints, "topology", f"{path}.topology"), f"{path}.topology")
    if len(topology) > 1:
        out.append(too_many(f"{path}.topology", len(topology), 1))
        return
    for i, constraint in enumerate(topology):
        key_path = f"{path}.topology[{i}].key"
        key = _str(constraint, "key", key_path) or ""
        if not key:
            out.append(required(key_path))
        else:
            _format(out, key_path, key, label_key)


def _claim_json(claim: Mapping[str, Any]) -> dict[str, Any]:
    """A ``PodGroupResourceClaim`` as Go marshals it (for a duplicate's message)."""
    out: dict[str, Any] = {"name": claim.get("name") or ""}
    for key in ("resourceClaimName", "resourceClaimTemplateName"):
        if claim.get(key) is not None:
            out[key] = claim[key]
    return out


def _unique(out: list[Problem], path: str, items: list[Mapping[str, Any]],
            as_json: Callable[[Mapping[str, Any]], object]) -> None:
    """``validate.Unique`` on a list map keyed by ``name``: every later entry with a name seen before."""
    seen: set[object] = set()
    for i, item in enumerate(items):
        name = item.get("name") or ""
        if name in seen:
            out.append(duplicate(f"{path}[{i}]", as_json(item)))
        seen.add(name)


def _resource_claims(parent: Mapping[str, Any], path: str, out: list[Problem]) -> None:
    claims = _items(_list(parent, "resourceClaims", path), path)
    if len(claims) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        out.append(too_many(path, len(claims), MAX_POD_GROUP_RESOURCE_CLAIMS))
        return
    _unique(out, path, claims, _claim_json)
    for i, claim in enumerate(claims):
        item = f"{path}[{i}]"
        claim_name = _str(claim, "resourceClaimName", f"{item}.resourceClaimName")
        template_name = _str(claim, "resourceClaimTemplateName", f"{item}.resourceClaimTemplateName")
        _union(out, item, (("resourceClaimName", claim_name is not None),
                           ("resourceClaimTemplateName", template_name is not None)))
        name = _str(claim, "name", f"{item}.name") or ""
        if not name:
            out.append(required(f"{item}.name"))
        else:
            _format(out, f"{item}.name", name, _short_name)
        if claim_name is not None:
            _format(out, f"{item}.resourceClaimName", claim_name, _long_name)
        if template_name is not None:
            _format(out, f"{item}.resourceClaimTemplateName", template_name, _long_name)


def _preemption_fields(parent: Mapping[str, Any], path: str, gates: frozenset[str], out: list[Problem]) -> None:
    """``disruptionMode``, ``priorityClassName`` and ``priority`` (WorkloadAwarePreemption)."""
    mode = _str(parent, "disruptionMode", f"{path}.disruptionMode")
    class_name = _str(parent, "priorityClassName", f"{path}.priorityClassName") or ""
    priority = _int32(parent, "priority", f"{path}.priority")
    if PREEMPTION_GATE not in gates:
        if mode is not None:
            out.append(forbidden(f"{path}.disruptionMode"))
        if class_name:
            out.append(forbidden(f"{path}.priorityClassName"))
        if priority is not None:
            out.append(forbidden(f"{path}.priority"))
        return
    if mode is not None and mode not in DISRUPTION_MODES:
        out.append(not_supported(f"{path}.disruptionMode", mode, DISRUPTION_MODES))
    if class_name:
        _format(out, f"{path}.priorityClassName", class_name, _long_name)
    if priority is not None and priority > HIGHEST_USER_DEFINABLE_PRIORITY:
        out.append(invalid(f"{path}.priority", priority,
                           f"must be less than or equal to {HIGHEST_USER_DEFINABLE_PRIORITY}"))


# -- PodGroup --------------------------------------------------------------------------------

def _template_ref(spec: Mapping[str, Any], out: list[Problem]) -> None:
    path = "spec.podGroupTemplateRef"
    ref = _map(spec, "podGroupTemplateRef", path)
    if ref is None:
        return
    workload = _map(ref, "workload", f"{path}.workload")
    _union(out, path, (("workload", workload is not None),))
    if workload is None:
        return
    workload_name = _str(workload, "workloadName", f"{path}.workload.workloadName") or ""
    template_name = _str(workload, "podGroupTemplateName", f"{path}.workload.podGroupTemplateName") or ""
    if not workload_name:
        out.append(required(f"{path}.workload.workloadName"))
    else:
        _format(out, f"{path}.workload.workloadName", workload_name, _long_name)
    if not template_name:
        out.append(required(f"{path}.workload.podGroupTemplateName"))
    else:
        _format(out, f"{path}.workload.podGroupTemplateName", template_name, _short_name)


_CONDITION_STATUSES = ("False", "True", "Unknown")
_REASON = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(_REASON)
_REASON_MSG = ("a condition reason must start with alphabetic character, optionally followed by a string of "
               "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'")


def _conditions(status: Mapping[str, Any], out: list[Problem]) -> None:
    """metav1's ``ValidateConditions``."""
    path = "status.conditions"
    seen: set[str] = set()
    for i, cond in enumerate(_items(_list(status, "conditions", path), path)):
        item = f"{path}[{i}]"
        type_ = _str(cond, "type", f"{item}.type") or ""
        if type_ in seen:
            out.append(duplicate(f"{item}.type", type_))
        seen.add(type_)
        _format(out, f"{item}.type", type_, label_key)
        value = _str(cond, "status", f"{item}.status") or ""
        if value not in _CONDITION_STATUSES:
            out.append(not_supported(f"{item}.status", value, _CONDITION_STATUSES))
        generation = _int64(cond, "observedGeneration", f"{item}.observedGeneration") or 0
        if generation < 0:
            out.append(invalid(f"{item}.observedGeneration", generation, "must be greater than or equal to zero"))
        if not _str(cond, "lastTransitionTime", f"{item}.lastTransitionTime"):
            out.append(required(f"{item}.lastTransitionTime"))
        reason = _str(cond, "reason", f"{item}.reason") or ""
        if not reason:
            out.append(required(f"{item}.reason"))
        else:
            if not _reason_ok(reason):
                out.append(invalid(f"{item}.reason", reason,
                                   regex_error(_REASON_MSG, _REASON, "my_name", "MY_NAME", "MyName",
                                               "ReasonA,ReasonB", "ReasonA:ReasonB")))
            if len(reason.encode()) > 1024:
                out.append((f"{item}.reason", "Too long: may not be more than 1024 bytes"))
        if len((_str(cond, "message", f"{item}.message") or "").encode()) > 32768:
            out.append((f"{item}.message", "Too long: may not be more than 32768 bytes"))


def _reason_ok(reason: str) -> bool:
    return _REASON_RE.fullmatch(reason) is not None


def _claim_statuses(status: Mapping[str, Any], spec_claims: list[Mapping[str, Any]], out: list[Problem]) -> None:
    path = "status.resourceClaimStatuses"
    statuses = _items(_list(status, "resourceClaimStatuses", path), path)
    names = {claim.get("name") for claim in spec_claims}
    for i, entry in enumerate(statuses):  # the imperative check: each names a spec entry
        name = _str(entry, "name", f"{path}[{i}].name") or ""
        if name not in names:
            out.append(invalid(f"{path}[{i}].name", name, "must match the name of an entry in `spec.resourceClaims`"))
    if len(statuses) > MAX_POD_GROUP_RESOURCE_CLAIMS:
        out.append(too_many(path, len(statuses), MAX_POD_GROUP_RESOURCE_CLAIMS))
        return

    def as_json(entry: Mapping[str, Any]) -> object:
        shown: dict[str, Any] = {"name": entry.get("name") or ""}
        if entry.get("resourceClaimName") is not None:
            shown["resourceClaimName"] = entry["resourceClaimName"]
        return shown

    _unique(out, path, statuses, as_json)
    for i, entry in enumerate(statuses):
        claim_name = _str(entry, "resourceClaimName", f"{path}[{i}].resourceClaimName")
        if claim_name is not None:
            _format(out, f"{path}[{i}].resourceClaimName", claim_name, _long_name)


def pod_group_problems(raw: Mapping[str, Any], gates: frozenset[str] = ALL_GATES) -> list[Problem]:
    """Every problem the API server would report for ``raw`` (a PodGroup), in its order."""
    out: list[Problem] = []
    try:
        _metadata(raw, out)
        spec = _map(raw, "spec", "spec") or {}
        _template_ref(spec, out)
        _scheduling_policy(_map(spec, "schedulingPolicy", "spec.schedulingPolicy"), "spec.schedulingPolicy", out)
        _scheduling_constraints(spec, "spec.schedulingConstraints", gates, out)
        _resource_claims(spec, "spec.resourceClaims", out)
        _preemption_fields(spec, "spec", gates, out)
        status = _map(raw, "status", "status") or {}
        _conditions(status, out)
        _claim_statuses(status, _items(_list(spec, "resourceClaims", "spec.resourceClaims"), "spec.resourceClaims"), out)
    except DecodeError as err:
        return [(err.path, err.message)]
    return out


# -- Workload --------------------------------------------------------------------------------

def _controller_ref(spec: Mapping[str, Any], out: list[Problem]) -> None:
    path = "spec.controllerRef"
    ref = _map(spec, "controllerRef", path)
    if ref is None:
        return
    api_group = _str(ref, "apiGroup", f"{path}.apiGroup") or ""
    if api_group:
        _format(out, f"{path}.apiGroup", api_group, _long_name)
    for key in ("kind", "name"):
        value = _str(ref, key, f"{path}.{key}") or ""
        if not value:
            out.append(required(f"{path}.{key}"))
        else:
            _format(out, f"{path}.{key}", value, path_segment_name)


def _template_json(template: Mapping[str, Any]) -> dict[str, Any]:
    """A ``PodGroupTemplate`` as Go marshals it (for a duplicate's message): its fields in
    declaration order, ``omitempty`` ones left out when empty, ``schedulingConstraints`` null."""
    policy = template.get("schedulingPolicy") or {}
    shown_policy: dict[str, Any] = {}
    if policy.get("basic") is not None:
        shown_policy["basic"] = {}
    if policy.get("gang") is not None:
        shown_policy["gang"] = {"minCount": (policy["gang"] or {}).get("minCount") or 0}
    constraints = template.get("schedulingConstraints")
    shown_constraints: dict[str, Any] | None = None
    if constraints is not None:
        topology = constraints.get("topology") or []
        shown_constraints = {"topology": [{"key": c.get("key") or ""} for c in topology]} if topology else {}
    out: dict[str, Any] = {"name": template.get("name") or "", "schedulingPolicy": shown_policy,
                           "schedulingConstraints": shown_constraints}
    if template.get("resourceClaims"):
        out["resourceClaims"] = [_claim_json(c) for c in template["resourceClaims"]]
    for key in ("disruptionMode", "priorityClassName", "priority"):
        if template.get(key) not in (None, ""):
            out[key] = template[key]
    return out


def _template(template: Mapping[str, Any], path: str, gates: frozenset[str], out: list[Problem]) -> None:
    name = _str(template, "name", f"{path}.name") or ""
    if not name:
        out.append(required(f"{path}.name"))
    else:
        _format(out, f"{path}.name", name, _short_name)
    _scheduling_policy(_map(template, "schedulingPolicy", f"{path}.schedulingPolicy"), f"{path}.schedulingPolicy", out)
    _scheduling_constraints(template, f"{path}.schedulingConstraints", gates, out)
    _resource_claims(template, f"{path}.resourceClaims", out)
    _preemption_fields(template, path, gates, out)


def workload_problems(raw: Mapping[str, Any], gates: frozenset[str] = ALL_GATES) -> list[Problem]:
    """Every problem the API server would report for ``raw`` (a Workload), in its order."""
    out: list[Problem] = []
    try:
        _metadata(raw, out)
        spec = _map(raw, "spec", "spec") or {}
        _controller_ref(spec, out)
        path = "spec.podGroupTemplates"
        templates = _items(_list(spec, "podGroupTemplates", path), path)
        if len(templates) > WORKLOAD_MAX_POD_GROUP_TEMPLATES:
            out.append(too_many(path, len(templates), WORKLOAD_MAX_POD_GROUP_TEMPLATES))
        elif not templates:
            out.append(required(path))
        else:
            _unique(out, path, templates, _template_json)
            for i, template in enumerate(templates):
                _template(template, f"{path}[{i}]", gates, out)
    except DecodeError as err:
        return [(err.path, err.message)]
    return out


# -- Pod.spec.schedulingGroup ------------------------------------------------------------------

def scheduling_group_problems(spec: Mapping[str, Any]) -> list[Problem]:
    """``validateSchedulingGroup``: a union with one member, ``podGroupName``, a DNS subdomain."""
    path = "spec.schedulingGroup"
    try:
        group = _map(spec, "schedulingGroup", path)
        if group is None:
            return []
        name = _str(group, "podGroupName", f"{path}.podGroupName")
    except DecodeError as err:
        return [(err.path, err.message)]
    if name is None:
        return [invalid(f"{path}.podGroupName", None, "must specify one of: `podGroupName`")]
    return [invalid(f"{path}.podGroupName", name, message) for message in dns1123_subdomain(name, "characters")]
