"""``metadata.managedFields`` as a real API server writes them, so that objects have the
shape and size kubesched decodes on a real cluster (every object the transcript shows
carries them).

Server-side field management records, per field manager (the client's User-Agent up to
its first ``/``) and per subresource, which fields it last set, as a ``FieldsV1`` tree
(``f:<field>``, ``k:{"name":...}`` for keyed list items, ``.`` for the map itself). This
is that tree built from the fields present; it does not track ownership conflicts or
apply patches, which kubesched never relies on.
"""

from __future__ import annotations

import contextvars

import orjson

__all__ = ["MANAGER", "manager_from_user_agent", "stamp"]

JSONDict = dict[str, object]

#: The field manager of the write in progress (set by the HTTP handlers from the User-Agent).
MANAGER: contextvars.ContextVar[str] = contextvars.ContextVar("field_manager", default="tests")

_SERVER_SET = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
               "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"}
_LIST_KEYS = ("name", "type", "containerPort", "key", "mountPath", "devicePath", "ip")


def manager_from_user_agent(user_agent: str) -> str:
    """The default field manager: the User-Agent's program name (``kubesched/0.1.0 ...`` -> kubesched)."""
    head = user_agent.split("/", 1)[0].strip()
    return head[:128] or "unknown"


def _fields(value: object) -> JSONDict:
    if isinstance(value, dict):
        return {f"f:{key}": _fields(item) for key, item in value.items()} | {".": {}} if value else {}
    if isinstance(value, list):
        out: JSONDict = {}
        for item in value:
            if isinstance(item, dict):
                key = next((k for k in _LIST_KEYS if k in item), None)
                if key is not None:
                    out["k:" + orjson.dumps({key: item[key]}).decode()] = _fields(item)
                    continue
            out["v:" + orjson.dumps(item).decode()] = {}
        return out
    return {}


def _fields_v1(obj: JSONDict, status: bool) -> JSONDict:
    if status:
        section = obj.get("status")
        return {"f:status": _fields(section)} if isinstance(section, dict) and section else {}
    tree: JSONDict = {}
    md = obj.get("metadata")
    if isinstance(md, dict):
        kept = {k: v for k, v in md.items() if k not in _SERVER_SET}
        if kept:
            tree["f:metadata"] = {f"f:{k}": _fields(v) for k, v in kept.items()}
    for key, value in obj.items():
        if key not in ("metadata", "status", "kind", "apiVersion"):
            tree[f"f:{key}"] = _fields(value)
    return tree


def stamp(obj: JSONDict, api_version: str, previous: JSONDict | None, now: str) -> None:
    """Record this write in ``obj``'s managedFields: on create one entry for the object
    (and one for its status if it came with one); on update the entry of the part that
    changed (the status subresource when only status did), replacing that manager's."""
    md = obj.setdefault("metadata", {})
    assert isinstance(md, dict)
    manager = MANAGER.get()
    entries = [e for e in md.get("managedFields") or () if isinstance(e, dict)] if previous is not None else []
    if previous is None:
        parts = [False] + ([True] if obj.get("status") else [])
    else:
        only_status = all(obj.get(k) == previous.get(k) for k in obj.keys() | previous.keys()
                          if k not in ("status", "metadata"))
        parts = [only_status]
    for status in parts:
        fields = _fields_v1(obj, status)
        if not fields:
            continue
        entry: JSONDict = {"manager": manager, "operation": "Update", "apiVersion": api_version, "time": now,
                           "fieldsType": "FieldsV1", "fieldsV1": fields}
        if status:
            entry["subresource"] = "status"
        entries = [e for e in entries if not (e.get("manager") == manager
                                              and bool(e.get("subresource")) == status)]
        entries.append(entry)
    if entries:
        md["managedFields"] = entries
