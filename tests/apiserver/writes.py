"""Create, update, patch and delete with the generic registry's rules.

Shared by the HTTP handlers and the Python test API. The rules are
genericregistry.Store's and the strategies': PUT with a stale
resourceVersion is a Conflict with the optimistic-lock message; without one it
is unconditional unless the strategy forbids it (Lease); a main-resource write
keeps the stored status and a ``/status`` write keeps the stored spec.
"""

from __future__ import annotations

from collections.abc import Mapping

from tests.apiserver import errors, workload_resources
from tests.apiserver.admission import admit_pod, is_pod
from tests.apiserver.dra_resources import admit_create, admit_update, is_dra
from tests.apiserver.lifecycle import delete_pending_pod, is_new_style_event, validate_event_create
from tests.apiserver.patching import apply_patch
from tests.apiserver.resources import Resource, object_key
from tests.apiserver.storage import JSONDict, Preconditions, Store, clone, meta, now_rfc3339


def _strip(obj: JSONDict) -> JSONDict:
    """Objects are stored without kind/apiVersion (lists carry none per item)."""
    obj.pop("kind", None)
    obj.pop("apiVersion", None)
    return obj


def with_kind(resource: Resource, obj: Mapping[str, object]) -> JSONDict:
    return {"kind": resource.kind, "apiVersion": resource.api_version, **obj}


def _place(resource: Resource, obj: JSONDict, namespace: str | None) -> None:
    md = meta(obj)
    if resource.namespaced:
        given = md.get("namespace")
        if namespace is not None:
            if given not in (None, "", namespace):
                raise errors.bad_request("the namespace of the provided object does not match the namespace "
                                         "sent on the request")
            md["namespace"] = namespace
        elif not given:
            md["namespace"] = "default"
    else:
        md.pop("namespace", None)


def create(store: Store, resource: Resource, obj: JSONDict, namespace: str | None, *, keep_status: bool) -> JSONDict:
    """POST: admission (pods), then store; ``obj`` becomes the store's."""
    _strip(obj)
    _place(resource, obj, namespace)
    md = meta(obj)
    for server_set in ("resourceVersion", "uid", "creationTimestamp", "generation", "deletionTimestamp"):
        if server_set == "generation" and workload_resources.keeps_creator_generation(resource):
            continue
        if not keep_status:
            md.pop(server_set, None)
    md.pop("resourceVersion", None)
    if is_dra(resource):
        admit_create(store, resource, obj, keep_status)
    if workload_resources.is_workload_kind(resource):
        workload_resources.admit_create(store.feature_gates, resource, obj, keep_status)
    if is_new_style_event(resource):
        validate_event_create(obj)
    with store.lock:
        if is_pod(resource):
            admit_pod(store, obj, keep_status)
        return store.create(resource, obj)


def _merge(store: Store, resource: Resource, current: JSONDict, incoming: JSONDict,
           subresource: str | None) -> JSONDict:
    """The object to store: the incoming one with the parts this endpoint may not change kept."""
    _keep_deletion(resource, current, incoming)
    if is_dra(resource):
        merged = _merge_endpoint(resource, current, incoming, subresource)
        return admit_update(store, resource, merged, current, subresource)
    if workload_resources.is_workload_kind(resource):
        merged = _merge_endpoint(resource, current, incoming, subresource)
        return workload_resources.admit_update(store.feature_gates, resource, merged, current, subresource)
    return _merge_endpoint(resource, current, incoming, subresource)


def _keep_deletion(resource: Resource, current: JSONDict, incoming: JSONDict) -> None:
    """rest.BeforeUpdate: a deletion once requested stays; no finalizer may be added after it."""
    old_md, new_md = meta(current), meta(incoming)
    if not old_md.get("deletionTimestamp"):
        return
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if key in old_md:
            new_md[key] = old_md[key]
    old_finalizers = old_md.get("finalizers")
    before = set(old_finalizers) if isinstance(old_finalizers, list) else set()
    new_finalizers = new_md.get("finalizers")
    if isinstance(new_finalizers, list) and any(f not in before for f in new_finalizers):
        raise errors.invalid(resource.group, resource.kind, str(new_md.get("name") or ""), [
            ("FieldValueForbidden", "metadata.finalizers",
             "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers "
             + "[]string{" + ", ".join(f'"{f}"' for f in new_finalizers if f not in before) + "}")])


def _finalized(store: Store, resource: Resource, key: str, name: str, stored: JSONDict) -> JSONDict:
    """An object being deleted whose last finalizer went is deleted now (the generic store's Update)."""
    md = meta(stored)
    if md.get("deletionTimestamp") and not md.get("finalizers"):
        return store.delete(resource, key, name)
    return stored


def _merge_endpoint(resource: Resource, current: JSONDict, incoming: JSONDict, subresource: str | None) -> JSONDict:
    if subresource == "status":
        out = clone(current)
        if "status" in incoming:
            out["status"] = incoming["status"]
        else:
            out.pop("status", None)
        new_md = meta(incoming)
        old_md = meta(out)
        for key in ("labels", "annotations"):
            if key in new_md:
                old_md[key] = new_md[key]
            else:
                old_md.pop(key, None)
        return out
    if subresource is None and resource.has_status and "status" in current:
        incoming["status"] = current["status"]
    elif subresource is None and resource.has_status:
        incoming.pop("status", None)
    if is_pod(resource):
        # The pod strategy keeps what only the binding or graceful deletion may set.
        spec = incoming.get("spec")
        old_spec = current.get("spec")
        if isinstance(spec, dict) and isinstance(old_spec, dict) and old_spec.get("nodeName"):
            spec["nodeName"] = old_spec["nodeName"]
    return incoming


def update(store: Store, resource: Resource, namespace: str | None, name: str, obj: JSONDict,
           subresource: str | None = None, *, raw: bool = False) -> tuple[JSONDict, bool]:
    """PUT: returns the stored object and whether it was created. ``raw`` skips the strategy (test API)."""
    _strip(obj)
    _place(resource, obj, namespace)
    md = meta(obj)
    if md.get("name") not in (None, "", name):
        raise errors.bad_request(f"the name of the object ({md.get('name')}) does not match the name on the URL ({name})")
    md["name"] = name
    key = object_key(resource, str(md.get("namespace") or "") or None, name)
    rv = str(md.get("resourceVersion") or "")
    with store.lock:
        current = store.get(resource, key)
        if current is None:
            if subresource is not None or raw or not resource.create_on_update:
                raise errors.not_found(resource, name)
            return create(store, resource, obj, namespace, keep_status=raw), True
        if not rv and not resource.unconditional_update and not raw:
            raise errors.invalid(resource.group, resource.plural, name, [
                ("FieldValueInvalid", "metadata.resourceVersion", "Invalid value: 0x0: must be specified for an update")])
        if rv and rv != meta(current).get("resourceVersion"):
            raise errors.conflict(resource, name, errors.OPTIMISTIC_LOCK)
        uid = md.get("uid")
        pre = Preconditions(uid=str(uid)) if uid else None
        incoming = obj if raw else _merge(store, resource, current, obj, subresource)
        stored = store.mutate(resource, key, name, lambda _cur: incoming, pre)
        return (stored if raw else _finalized(store, resource, key, name, stored)), False


def patch(store: Store, resource: Resource, namespace: str | None, name: str, content_type: str,
          body: object, subresource: str | None = None) -> JSONDict:
    """PATCH: apply to the stored object, then update with this endpoint's rules.

    A resourceVersion in the patch is a precondition (Conflict when stale), as
    patch.go's patcher turns it into one.
    """
    key = object_key(resource, namespace if resource.namespaced else None, name)
    with store.lock:
        current = store.get(resource, key)
        if current is None:
            raise errors.not_found(resource, name)
        patched = apply_patch(content_type, with_kind(resource, clone(current)), body)
        _strip(patched)
        md = meta(patched)
        rv = str(md.get("resourceVersion") or "")
        if rv and rv != meta(current).get("resourceVersion"):
            raise errors.conflict(resource, name, errors.OPTIMISTIC_LOCK)
        md["resourceVersion"] = meta(current).get("resourceVersion")
        if md.get("name") != name:
            raise errors.bad_request("metadata.name: Invalid value: the name of the object does not match")
        uid = md.get("uid")
        pre = Preconditions(uid=str(uid)) if uid else None
        incoming = _merge(store, resource, current, patched, subresource)
        stored = store.mutate(resource, key, name, lambda _cur: incoming, pre)
        return _finalized(store, resource, key, name, stored)


def delete(store: Store, resource: Resource, namespace: str | None, name: str,
           options: Mapping[str, object] | None = None) -> JSONDict:
    """DELETE, honouring body preconditions: immediate, unless the object has finalizers: then it
    only gets its ``deletionTimestamp`` and goes when the last finalizer is removed (no graceful
    deletion of pods)."""
    pre = None
    pre_body = (options or {}).get("preconditions")
    if isinstance(pre_body, Mapping):
        uid, rv = pre_body.get("uid"), pre_body.get("resourceVersion")
        pre = Preconditions(str(uid) if uid else None, str(rv) if rv else None)
    key = object_key(resource, namespace if resource.namespaced else None, name)
    with store.lock:
        current = store.get(resource, key)
        if current is not None and meta(current).get("finalizers"):
            def mark(obj: JSONDict) -> JSONDict:
                md = meta(obj)
                md.setdefault("deletionTimestamp", now_rfc3339())
                md.setdefault("deletionGracePeriodSeconds", 0)
                return obj

            return store.mutate(resource, key, name, mark, pre, strategy=False)
        if is_pod(resource):
            gone = delete_pending_pod(store, resource, key, name, pre)
            if gone is not None:
                return gone
        return store.delete(resource, key, name, pre)


def delete_response(resource: Resource, deleted: JSONDict) -> JSONDict:
    """Pods return the deleted object (ReturnDeletedObject); other registries a Success Status, or the
    object when finalizers keep it."""
    if is_pod(resource) or meta(deleted).get("finalizers"):
        return with_kind(resource, deleted)
    details: JSONDict = {"name": meta(deleted).get("name"), "kind": resource.plural, "uid": meta(deleted).get("uid")}
    if resource.group:
        details["group"] = resource.group
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
