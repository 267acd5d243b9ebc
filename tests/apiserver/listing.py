"""GET on a collection: resourceVersion semantics, paging and continue tokens.

As etcd3's GetList: items sorted by key, ``limit`` cuts a page and returns an
opaque continue token holding the page's revision and the next key; continuing
reads the same revision, so pages form one consistent snapshot, until that
revision is compacted (410 Expired with a fresh token that continues at the
latest revision). ``remainingItemCount`` only when no selector is given.
"""

from __future__ import annotations

import base64
import bisect

import orjson

from tests.apiserver import errors
from tests.apiserver.options import ListOptions, parse_revision
from tests.apiserver.resources import Resource
from tests.apiserver.selectors import Predicate
from tests.apiserver.storage import Store

JSONDict = dict[str, object]

LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def encode_continue(rev: int, start: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rev, "start": start})
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_continue(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
        if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        rev, start = data.get("rv"), data.get("start")
        if not isinstance(rev, int) or not isinstance(start, str) or rev == 0:
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        if ".." in start.split("/") or start.startswith("/"):
            raise ValueError("continue key is not valid: path traversal attempt detected")
        return rev, start
    except (ValueError, orjson.JSONDecodeError) as exc:
        text = str(exc) if str(exc).startswith("continue key") else f"continue key is not valid: {exc}"
        raise errors.bad_request(text) from exc


def list_revision(store: Store, opts: ListOptions) -> tuple[int, str]:
    """The revision a list is served at and the key it starts from (caller holds the lock)."""
    if opts.continue_token:
        if opts.resource_version not in ("", "0"):
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        rev, start = decode_continue(opts.continue_token)
        if rev == -1:
            return store.revision, start
        if rev < store.floor:
            raise errors.expired(CONTINUE_TOO_OLD, {"continue": encode_continue(-1, start)})
        return rev, start
    if opts.match == "Exact":
        rev = parse_revision(opts.resource_version)
        if rev < store.floor:
            raise errors.expired(LIST_TOO_OLD)
        if rev > store.revision:
            raise errors.too_large_resource_version(rev, store.revision)
        return rev, ""
    return store.revision, ""


def list_body(store: Store, resource: Resource, pred: Predicate, opts: ListOptions) -> bytes:
    """The serialized ``<Kind>List`` for one list request."""
    with store.lock:
        rev, start = list_revision(store, opts)
        state = store.state_at(resource, rev)
        prefix = f"{pred.namespace}/" if pred.namespace and resource.namespaced else ""
        keys = sorted(k for k in state if k.startswith(prefix)) if prefix else sorted(state)
        first = bisect.bisect_left(keys, prefix + start) if start else 0
        items: list[JSONDict] = []
        limit = opts.limit
        next_index = len(keys)
        for index in range(first, len(keys)):
            obj = state[keys[index]]
            if pred.matches(obj):
                items.append(obj)
                if limit and len(items) == limit:
                    next_index = index + 1
                    break
        list_meta: JSONDict = {"resourceVersion": str(rev)}
        if next_index < len(keys):
            list_meta["continue"] = encode_continue(rev, keys[next_index - 1][len(prefix):] + "\x00")
            if not pred.has_selectors:
                list_meta["remainingItemCount"] = len(keys) - next_index
        body = {"kind": resource.list_kind, "apiVersion": resource.api_version, "metadata": list_meta,
                "items": items}
        return orjson.dumps(body)
