"""The assume caches of PVs and claims (upstream's ``PVAssumeCache`` / ``PVCAssumeCache``).

Reserve assumes the bindings it chose (a PV pre-bound to its claim, a claim annotated
with the selected node) so that the next pods are scheduled against them before the
API server has them. An assumed object shadows the stored one until the store reports
a change to that object (the binding written, or anything newer), or Unreserve
restores it.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from ...framework.handle import JSONObject

__all__ = ["AssumeCache"]

T = TypeVar("T")


def _key(obj: JSONObject) -> tuple[str, str]:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return "", ""
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class AssumeCache(Generic[T]):
    """Assumed records by (namespace, name), dropped when the store changes the object."""

    def __init__(self) -> None:
        self.assumed: dict[tuple[str, str], T] = {}

    def assume(self, key: tuple[str, str], record: T) -> None:
        self.assumed[key] = record

    def restore(self, key: tuple[str, str]) -> None:
        self.assumed.pop(key, None)

    def get(self, key: tuple[str, str]) -> T | None:
        return self.assumed.get(key)

    # -- ObjectHandler: the store's version wins once it changes ------------------------
    def on_object_add(self, obj: JSONObject) -> None:
        self.assumed.pop(_key(obj), None)

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        self.assumed.pop(_key(new), None)

    def on_object_delete(self, obj: JSONObject) -> None:
        self.assumed.pop(_key(obj), None)
