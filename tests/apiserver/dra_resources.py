"""resource.k8s.io/v1: what kube-apiserver v1.36 does to DRA objects before storing them.

The registries' strategies and pkg/apis/resource/validation, for what a scheduler and a
driver write:

* ResourceClaim: a POST drops ``status``; requests are defaulted (``allocationMode:
  ExactCount``, ``count: 1``) and validated (a name, exactly one of ``exactly`` and
  ``firstAvailable``, a ``deviceClassName``, a count above zero); the spec is immutable
  on update. ``resourceclaims/status`` keeps spec and metadata (``ResetObjectMetaForStatus``),
  and checks ``reservedFor`` (``resource``, ``name``, ``uid`` required, uids unique, at most
  256 entries, none without an allocation, none added to a claim being deleted), an
  allocation that may be removed but never changed, new results naming a request of the
  claim, and drops device statuses of deallocated devices.
* ResourceClaimTemplate: the template's claim spec, defaulted and validated the same way.
* ResourceSlice: a driver, a pool with a name and a positive ``resourceSliceCount``, exactly
  one of ``nodeName``/``nodeSelector``/``allNodes``/``perDeviceNodeSelection``, device names
  unique; driver, pool name and node name immutable.
* DeviceClass: every selector a CEL expression that compiles in the DRA environment, an
  ``extendedResourceName`` that is one; claim request selectors compile too (the CEL
  compiler is kubesched's, which follows upstream's environment).

Errors are 422 ``Invalid`` with upstream's field paths and wording.
"""

from __future__ import annotations

from collections.abc import Mapping

import re

import orjson

from kubesched.cel import selector_problem
from tests.apiserver import errors
from tests.apiserver.resources import BY_PATH, Resource
from tests.apiserver.storage import JSONDict, Store, meta

GROUP = "resource.k8s.io"
CLAIMS = BY_PATH[(GROUP, "v1", "resourceclaims")]
TEMPLATES = BY_PATH[(GROUP, "v1", "resourceclaimtemplates")]
SLICES = BY_PATH[(GROUP, "v1", "resourceslices")]
CLASSES = BY_PATH[(GROUP, "v1", "deviceclasses")]
NAMESPACES = BY_PATH[("", "v1", "namespaces")]
RESERVED_FOR_MAX = 256  # resource.ResourceClaimReservedForMaxSize
ADMIN_LABEL = "resource.kubernetes.io/admin-access"  # resource.DRAAdminNamespaceLabelKey

Cause = tuple[str, str, str]  # (reason, field, message without the field)


def is_dra(resource: Resource) -> bool:
    return resource.group == GROUP


def _quote(value: object) -> str:
    """How field.Error renders a bad value: strings quoted, numbers and booleans bare, the rest as JSON."""
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


_REASONS = {"Invalid value": "FieldValueInvalid", "Forbidden": "FieldValueForbidden", "Too long": "FieldValueTooLong"}
"""field.ErrorType's reason for each message ``selector_problem`` starts with."""


def _required(path: str, detail: str = "") -> Cause:
    return ("FieldValueRequired", path, f"Required value: {detail}" if detail else "Required value")


def _invalid(path: str, value: object, detail: str) -> Cause:
    return ("FieldValueInvalid", path, f"Invalid value: {_quote(value)}: {detail}")


def _forbidden(path: str, detail: str) -> Cause:
    return ("FieldValueForbidden", path, f"Forbidden: {detail}")


def _duplicate(path: str, value: object) -> Cause:
    return ("FieldValueDuplicate", path, f"Duplicate value: {_quote(value)}")


def _dict(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _raise(resource: Resource, obj: Mapping[str, object], causes: list[Cause]) -> None:
    if causes:
        name = str(_dict(obj.get("metadata")).get("name") or "")
        raise errors.invalid(resource.group, resource.kind, name, causes)


# -- claim specs ----------------------------------------------------------------------------
def _default_exactly(exactly: JSONDict) -> None:
    """The v1 defaults of an ExactDeviceRequest (pkg/apis/resource/v1/defaults.go)."""
    exactly.setdefault("allocationMode", "ExactCount")
    if exactly.get("allocationMode") == "ExactCount":
        exactly.setdefault("count", 1)


def _check_exactly(exactly: Mapping[str, object], path: str) -> list[Cause]:
    causes: list[Cause] = []
    if not exactly.get("deviceClassName"):
        causes.append(_required(f"{path}.deviceClassName"))
    mode = exactly.get("allocationMode")
    count = exactly.get("count")
    if mode == "ExactCount":
        if not isinstance(count, int) or count <= 0:
            causes.append(_invalid(f"{path}.count", count, "must be greater than zero"))
    elif mode == "All":
        if count not in (None, 0):
            causes.append(_invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'"))
    else:
        causes.append(("FieldValueNotSupported", f"{path}.allocationMode",
                       f'Unsupported value: {_quote(mode)}: supported values: "All", "ExactCount"'))
    causes.extend(_selectors(exactly.get("selectors"), f"{path}.selectors"))
    return causes


def _selectors(selectors: object, path: str) -> list[Cause]:
    """validateSelector: a ``cel`` selector whose expression compiles, within the length and
    estimated-cost limits (``validateCELSelector``)."""
    causes: list[Cause] = []
    for index, selector in enumerate(_list(selectors)):
        cel = _dict(selector).get("cel")
        if not isinstance(cel, Mapping):
            causes.append(_required(f"{path}[{index}].cel"))
            continue
        expression = str(cel.get("expression") or "")
        problem = selector_problem(expression)
        if problem is not None:
            causes.append((_REASONS[problem.partition(":")[0]], f"{path}[{index}].cel.expression", problem))
    return causes


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, valid as a
    quota name (``requests.<name>``)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    prefix, _, short = f"requests.{name}".rpartition("/")
    return (0 < len(prefix) <= 253 and _DNS_SUBDOMAIN.match(prefix) is not None
            and 0 < len(short) <= 63 and _QUALIFIED_NAME.match(short) is not None)


def _device_class(spec: Mapping[str, object]) -> list[Cause]:
    causes = _selectors(spec.get("selectors"), "spec.selectors")
    extended = spec.get("extendedResourceName")
    if extended is not None and not is_extended_resource_name(str(extended)):
        causes.append(_invalid("spec.extendedResourceName", extended, "must be a valid extended resource name"))
    return causes


def claim_spec(spec: JSONDict, path: str) -> list[Cause]:
    """Default then validate ``spec`` (a ResourceClaimSpec) in place; the causes found."""
    devices = spec.get("devices")
    if not isinstance(devices, dict):
        return []
    causes: list[Cause] = []
    seen: set[str] = set()
    for index, request in enumerate(_list(devices.get("requests"))):
        where = f"{path}.devices.requests[{index}]"
        if not isinstance(request, dict):
            causes.append(_required(where))
            continue
        name = request.get("name")
        if not name:
            causes.append(_required(f"{where}.name"))
        elif name in seen:
            causes.append(_duplicate(where, name))
        else:
            seen.add(str(name))
        exactly = request.get("exactly")
        first = _list(request.get("firstAvailable"))
        if isinstance(exactly, dict) and first:
            causes.append(_invalid(where, None, "exactly one of `exactly` or `firstAvailable` is required, but "
                                               "multiple fields are set"))
        elif isinstance(exactly, dict):
            _default_exactly(exactly)
            causes.extend(_check_exactly(exactly, f"{where}.exactly"))
        elif first:
            for sub_index, sub in enumerate(first):
                if isinstance(sub, dict):
                    _default_exactly(sub)
                    if not sub.get("name"):
                        causes.append(_required(f"{where}.firstAvailable[{sub_index}].name"))
                    causes.extend(_check_exactly(sub, f"{where}.firstAvailable[{sub_index}]"))
        else:
            causes.append(_required(where, "exactly one of `exactly` or `firstAvailable` is required"))
    return causes


def _request_names(spec: Mapping[str, object]) -> set[str]:
    """The names a result may carry: each request, and ``request/subrequest`` for prioritized lists."""
    names: set[str] = set()
    for request in _list(_dict(spec.get("devices")).get("requests")):
        req = _dict(request)
        name = str(req.get("name") or "")
        first = _list(req.get("firstAvailable"))
        if not first:
            names.add(name)
        for sub in first:
            names.add(f"{name}/{_dict(sub).get('name')}")
    return names


# -- slices ---------------------------------------------------------------------------------
def _slice_spec(spec: Mapping[str, object], old: Mapping[str, object] | None) -> list[Cause]:
    causes: list[Cause] = []
    driver = spec.get("driver")
    if not driver:
        causes.append(_required("spec.driver"))
    pool = _dict(spec.get("pool"))
    if not pool.get("name"):
        causes.append(_required("spec.pool.name"))
    count = pool.get("resourceSliceCount")
    if not isinstance(count, int) or count <= 0:
        causes.append(_invalid("spec.pool.resourceSliceCount", count if count is not None else 0,
                               "must be greater than zero"))
    if old is not None:
        for field, new_value, old_value in (("spec.pool.name", pool.get("name"), _dict(old.get("pool")).get("name")),
                                            ("spec.driver", driver, old.get("driver")),
                                            ("spec.nodeName", spec.get("nodeName"), old.get("nodeName"))):
            if new_value != old_value:
                causes.append(_invalid(field, new_value, "field is immutable"))
    chosen: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name:
            chosen.append("`nodeName`")
        else:
            causes.append(_invalid("spec.nodeName", node_name, "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        terms = _list(_dict(spec.get("nodeSelector")).get("nodeSelectorTerms"))
        if len(terms) != 1:
            causes.append(_invalid("spec.nodeSelector.nodeSelectorTerms", terms,
                                   "must have exactly one node selector term"))
    for flag in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(flag)
        if value is True:
            chosen.append(f"`{flag}`")
        elif value is not None:
            causes.append(_invalid(f"spec.{flag}", value, "must be either unset or set to true"))
    if not chosen:
        causes.append(_required("spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                                        "`perDeviceNodeSelection` is required"))
    elif len(chosen) > 1:
        causes.append(_invalid("spec", "{" + ", ".join(chosen) + "}", "exactly one of `nodeName`, `nodeSelector`, "
                               "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
    names: set[str] = set()
    for index, device in enumerate(_list(spec.get("devices"))):
        name = _dict(device).get("name")
        if not name:
            causes.append(_required(f"spec.devices[{index}].name"))
        elif name in names:
            causes.append(_duplicate(f"spec.devices[{index}]", name))
        else:
            names.add(str(name))
    return causes


# -- admin access ---------------------------------------------------------------------------------
def _admin_namespace(store: Store, namespace: str, path: str) -> list[Cause]:
    """The namespace label admin access needs (AuthorizedForAdmin), checked once a request asks for it."""
    found = store.get(NAMESPACES, namespace)
    if found is None:
        return [("InternalError", path, f'Internal error: could not retrieve namespace to verify admin access: '
                                        f'namespaces "{namespace}" not found')]
    if _dict(meta(found).get("labels")).get(ADMIN_LABEL) != "true":
        return [_forbidden(path, f"admin access to devices requires the `{ADMIN_LABEL}: true` label on the "
                                 "containing namespace")]
    return []


def _admin_requested(spec: Mapping[str, object]) -> str | None:
    """The path of the first request asking for admin access (only ``exactly`` requests can)."""
    for index, request in enumerate(_list(_dict(spec.get("devices")).get("requests"))):
        if _dict(_dict(request).get("exactly")).get("adminAccess") is True:
            return f"spec.devices.requests[{index}].adminAccess"
    return None


def _admin_granted(status: Mapping[str, object]) -> str | None:
    results = _list(_dict(_dict(status.get("allocation")).get("devices")).get("results"))
    for index, result in enumerate(results):
        if _dict(result).get("adminAccess") is True:
            return f"status.allocation.devices.results[{index}].adminAccess"
    return None


# -- the hooks writes.py calls ------------------------------------------------------------------
def admit_create(store: Store, resource: Resource, obj: JSONDict, keep_status: bool) -> None:
    """Defaults and validation of a new DRA object (``keep_status``: the test API seeding state)."""
    causes: list[Cause] = []
    spec = obj.get("spec")
    namespace = str(meta(obj).get("namespace") or "")
    if resource is CLAIMS:
        if not keep_status:
            obj.pop("status", None)  # PrepareForCreate: status must not be set by the user
        if isinstance(spec, dict):
            admin = _admin_requested(spec)
            causes = (_admin_namespace(store, namespace, admin) if admin else []) + claim_spec(spec, "spec")
    elif resource is TEMPLATES:
        inner = _dict(spec).get("spec")
        if isinstance(inner, dict):
            admin = _admin_requested(inner)  # upstream names the claim's path here too
            causes = (_admin_namespace(store, namespace, admin) if admin else []) + claim_spec(inner, "spec.spec")
    elif resource is SLICES:
        causes = _slice_spec(_dict(spec), None)
    elif resource is CLASSES:
        causes = _device_class(_dict(spec))
    _raise(resource, obj, causes)


def admit_update(store: Store, resource: Resource, new: JSONDict, old: JSONDict, subresource: str | None) -> JSONDict:
    """The object to store for an update of a DRA object, or Invalid."""
    causes: list[Cause] = []
    if resource is CLAIMS and subresource == "status":
        return _claim_status(store, new, old)
    if resource is CLAIMS:
        spec = new.get("spec")
        if isinstance(spec, dict):
            claim_spec(spec, "spec")  # defaulted before comparing, as the decoder defaults it
        if new.get("spec") != old.get("spec"):
            causes.append(_invalid("spec", new.get("spec"), "field is immutable"))
    elif resource is TEMPLATES:
        inner = _dict(new.get("spec")).get("spec")
        if isinstance(inner, dict):
            claim_spec(inner, "spec.spec")
        if new.get("spec") != old.get("spec"):
            causes.append(_invalid("spec", new.get("spec"), "field is immutable"))
    elif resource is SLICES:
        causes = _slice_spec(_dict(new.get("spec")), _dict(old.get("spec")))
    elif resource is CLASSES and new.get("spec") != old.get("spec"):
        causes = _device_class(_dict(new.get("spec")))
    _raise(resource, new, causes)
    return new


def _claim_status(store: Store, new: JSONDict, old: JSONDict) -> JSONDict:
    """resourceclaimStatusStrategy: PrepareForUpdate, then ValidateResourceClaimStatusUpdate."""
    new_meta, old_meta = meta(new), meta(old)
    for key in ("labels", "annotations", "finalizers", "ownerReferences", "deletionTimestamp", "generation"):
        if key in old_meta:
            new_meta[key] = old_meta[key]
        else:
            new_meta.pop(key, None)
    if "spec" in old:
        new["spec"] = old["spec"]
    status = new.get("status")
    if not isinstance(status, dict):
        status = {}
        new["status"] = status
    old_status = _dict(old.get("status"))
    _drop_deallocated_devices(status, old_status)
    causes: list[Cause] = []
    admin = None if _admin_granted(old_status) else _admin_granted(status)
    if admin:
        causes.extend(_admin_namespace(store, str(new_meta.get("namespace") or ""), admin))
    reserved = _list(status.get("reservedFor"))
    if len(reserved) > RESERVED_FOR_MAX:
        causes.append(("FieldValueTooMany", "status.reservedFor",
                       f"Too many: {len(reserved)}: must have at most {RESERVED_FOR_MAX} items"))
    else:
        uids: set[str] = set()
        for index, ref in enumerate(reserved):
            entry = _dict(ref)
            for field in ("resource", "name", "uid"):
                if not entry.get(field):
                    causes.append(_required(f"status.reservedFor[{index}].{field}"))
            uid = entry.get("uid")
            if uid:
                if uid in uids:
                    causes.append(_duplicate(f"status.reservedFor[{index}]", uid))
                uids.add(str(uid))
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")
    if reserved:
        if not allocation:
            causes.append(_forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif old_meta.get("deletionTimestamp"):
            before = {orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in _list(old_status.get("reservedFor"))}
            if any(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) not in before for r in reserved):
                causes.append(_forbidden("status.reservedFor", "new entries may not be added while "
                                         "`deallocationRequested` or `deletionTimestamp` are set"))
    if allocation and old_allocation:
        if allocation != old_allocation:
            causes.append(_invalid("status.allocation", allocation, "field is immutable"))
    elif isinstance(allocation, dict):
        names = _request_names(_dict(new.get("spec")))
        for index, result in enumerate(_list(_dict(allocation.get("devices")).get("results"))):
            entry = _dict(result)
            where = f"status.allocation.devices.results[{index}]"
            request = entry.get("request")
            if not request:
                causes.append(_required(f"{where}.request"))
            elif request not in names:
                causes.append(_invalid(f"{where}.request", request, "must be the name of a request in the claim "
                                       "or the name of a request and a subrequest separated by '/'"))
            for field in ("driver", "pool", "device"):
                if not entry.get(field):
                    causes.append(_required(f"{where}.{field}"))
    _raise(CLAIMS, new, causes)
    return new


def _device_id(entry: Mapping[str, object]) -> tuple[object, object, object, object]:
    return entry.get("driver"), entry.get("pool"), entry.get("device"), entry.get("shareID")


def _drop_deallocated_devices(status: JSONDict, old_status: Mapping[str, object]) -> None:
    """dropDeallocatedStatusDevices: device statuses of devices no longer allocated go."""
    devices = _list(status.get("devices"))
    if not devices:
        return
    gone = {_device_id(_dict(r)) for r in _list(_dict(_dict(old_status.get("allocation")).get("devices")).get("results"))}
    gone -= {_device_id(_dict(r)) for r in _list(_dict(_dict(status.get("allocation")).get("devices")).get("results"))}
    kept = [d for d in devices if _device_id(_dict(d)) not in gone]
    if kept:
        status["devices"] = kept
    else:
        status.pop("devices", None)
