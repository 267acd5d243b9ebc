"""PATCH bodies: JSON Patch (RFC 6902), JSON Merge Patch (RFC 7386) and strategic merge patch.

Strategic merge merges lists by their patchMergeKey (pod and node conditions
by ``type``, containers by ``name``...), honours ``$patch: delete|replace``
directives and drops the bookkeeping directives (``$setElementOrder``,
``$retainKeys``) it does not need to apply a patch faithfully.
"""

from __future__ import annotations

import copy

from tests.apiserver import errors

JSON = object
JSONDict = dict[str, object]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

# patchMergeKey of the list fields a scheduler-facing client patches (k8s.io/api types).
MERGE_KEYS: dict[str, str] = {
    "conditions": "type",
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "addresses": "type",
    "podIPs": "ip",
    "hostIPs": "ip",
    "resourceClaims": "name",
    "resourceClaimStatuses": "name",
    "readinessGates": "conditionType",
    "reservedFor": "uid",  # ResourceClaimStatus
}
# Lists of primitives with patchStrategy merge: union instead of replace.
MERGED_PRIMITIVE_LISTS = frozenset({"finalizers"})


def merge_patch(target: JSON, patch: JSON) -> JSON:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out: JSONDict = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise errors.bad_request(f"invalid JSON pointer: {path}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: JSON, parts: list[str], path: str) -> JSON:
    cur = doc
    for part in parts[:-1]:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            raise errors.StatusError(422, "Invalid", f"the server rejected our request due to an error in our "
                                     f"request: doc is missing path: \"{path}\": missing value")
    return cur


def _get(doc: JSON, path: str) -> JSON:
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise errors.StatusError(422, "Invalid", f"the server rejected our request due to an error in our request: "
                             f"doc is missing key: {path}: missing value")


def _remove(doc: JSON, path: str) -> JSON:
    value = _get(doc, path)
    parts = _pointer(path)
    parent = _parent(doc, parts, path)
    if isinstance(parent, dict):
        del parent[parts[-1]]
    elif isinstance(parent, list):
        del parent[int(parts[-1])]
    return value


def _add(doc: JSON, path: str, value: JSON) -> JSON:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise errors.StatusError(422, "Invalid", f"the server rejected our request due to an error in our "
                                     f"request: add operation does not apply: doc is missing path: \"{path}\"")
    return doc


def json_patch(target: JSON, ops: JSON) -> JSON:
    """RFC 6902 operations applied in order to a copy of ``target``."""
    if not isinstance(ops, list):
        raise errors.bad_request("json patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, dict):
            raise errors.bad_request("json patch operation must be an object")
        kind, path = op.get("op"), str(op.get("path", ""))
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)
            parts = _pointer(path)
            if not parts:
                doc = copy.deepcopy(op.get("value"))
            else:
                parent = _parent(doc, parts, path)
                if isinstance(parent, dict):
                    parent[parts[-1]] = copy.deepcopy(op.get("value"))
                elif isinstance(parent, list):
                    parent[int(parts[-1])] = copy.deepcopy(op.get("value"))
        elif kind == "move":
            doc = _add(doc, path, _remove(doc, str(op.get("from", ""))))
        elif kind == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, str(op.get("from", "")))))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise errors.StatusError(422, "Invalid", f"the server rejected our request due to an error in "
                                         f"our request: testing value {path} failed: test failed")
        else:
            raise errors.bad_request(f"Unexpected kind: {kind}")
    return doc


def _merge_list(field: str, target: list[JSON], patch: list[JSON]) -> list[JSON]:
    key = MERGE_KEYS.get(field)
    if key is None:
        if field in MERGED_PRIMITIVE_LISTS:
            return target + [v for v in patch if v not in target]
        return [strategic_merge(None, v, "") for v in patch if not (isinstance(v, dict) and "$patch" in v)]
    out = [copy.deepcopy(v) for v in target]
    for item in patch:
        if not isinstance(item, dict):
            continue
        if item.get("$patch") == "replace":
            return [strategic_merge(None, {k: v for k, v in i.items() if k != "$patch"}, "")
                    for i in patch if isinstance(i, dict)]
        ident = item.get(key)
        index = next((i for i, v in enumerate(out) if isinstance(v, dict) and v.get(key) == ident), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del out[index]
            continue
        if index is None:
            out.append(strategic_merge(None, item, ""))
        else:
            out[index] = strategic_merge(out[index], item, "")
    return out


def strategic_merge(target: JSON, patch: JSON, field: str = "") -> JSON:
    """Strategic merge patch of ``patch`` onto ``target`` (a new value; inputs untouched)."""
    if isinstance(patch, list):
        base = target if isinstance(target, list) else []
        return _merge_list(field, base, patch)
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: strategic_merge(None, v, k) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    out: JSONDict = {k: copy.deepcopy(v) for k, v in target.items()} if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            have = out.get(name)
            if isinstance(have, list) and isinstance(value, list):
                out[name] = [v for v in have if v not in value]
            continue
        if value is None:
            out.pop(key, None)
        else:
            out[key] = strategic_merge(out.get(key), value, key)
    return out


def apply_patch(content_type: str, target: JSONDict, patch: JSON) -> JSONDict:
    """The patched object for a PATCH with this Content-Type (415 for others)."""
    media = content_type.split(";", 1)[0].strip()
    if media == JSON_PATCH:
        result = json_patch(target, patch)
    elif media == MERGE_PATCH:
        result = merge_patch(target, patch)
    elif media == STRATEGIC_PATCH:
        result = strategic_merge(target, patch)
    else:
        raise errors.unsupported_media_type(media)
    if not isinstance(result, dict):
        raise errors.bad_request("the patch did not produce an object")
    return result
