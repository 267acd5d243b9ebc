"""Two rules of kube-apiserver's registries the generic store does not have, as the
transcript of a real v1.36.2 shows them:

* an ``events.k8s.io/v1`` Event is created only with an ``eventTime`` (422 Invalid
  ``eventTime: Required value`` otherwise, transcript 18);
* deleting a pod no node runs goes through graceful deletion with a grace period of
  0: the pod is first written with ``deletionTimestamp`` and
  ``deletionGracePeriodSeconds: 0`` (a MODIFIED event), then removed (DELETED),
  transcript 06. A bound pod is removed at once: there is no kubelet here to finish a
  graceful deletion.
"""

from __future__ import annotations

from tests.apiserver import errors
from tests.apiserver.resources import Resource
from tests.apiserver.storage import JSONDict, Preconditions, Store, meta, now_rfc3339

__all__ = ["delete_pending_pod", "is_new_style_event", "validate_event_create"]


def is_new_style_event(resource: Resource) -> bool:
    return resource.group == "events.k8s.io" and resource.kind == "Event"


def validate_event_create(obj: JSONDict) -> None:
    """ValidateEventCreate's first rule for events.k8s.io/v1: ``eventTime`` is required."""
    if not obj.get("eventTime"):
        raise errors.invalid("", "Event", str(meta(obj).get("name") or ""),
                             [("FieldValueRequired", "eventTime", "Required value")])


def delete_pending_pod(store: Store, resource: Resource, key: str, name: str,
                       pre: Preconditions | None) -> JSONDict | None:
    """A pending pod's deletion as two writes (caller holds the store lock); None when the
    pod is bound or gone (the caller deletes it the usual way)."""
    current = store.get(resource, key)
    spec = current.get("spec") if current is not None else None
    if current is None or (isinstance(spec, dict) and spec.get("nodeName")):
        return None

    def mark(obj: JSONDict) -> JSONDict:
        md = meta(obj)
        md.setdefault("deletionTimestamp", now_rfc3339())
        md["deletionGracePeriodSeconds"] = 0
        return obj

    store.mutate(resource, key, name, mark, pre, strategy=False)
    return store.delete(resource, key, name, None)
