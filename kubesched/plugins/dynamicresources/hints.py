"""DynamicResources' queueing hints (the events they are registered for: ``plugin.events_to_register``).

* Nodes added, or with new labels or allocatable (a pool's node selector, a device
  plugin's resources): no hint.
* A claim added or updated: queue when it is one of the pod's claims and it was created or
  its status changed, or when any claim got deallocated (devices freed); skip an update of
  the pod's claim that left its status alone (a finalizer added, say), and skip when the
  pod's claims are not all there yet.
* The pod's own update that records a generated claim (``UpdatePodGeneratedResourceClaim``):
  queue once every claim it names exists.
* DeviceClasses and ResourceSlices added or updated: no hint.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...framework import QueueingHint
from ...objects.dra import ResourceClaim
from ...objects.pod import PodInfo
from .claims import ClaimNotCreated
from .manager import DraManager

__all__ = ["HintsMixin"]


def _meta(obj: object) -> Mapping[str, object]:
    if type(obj) is dict:  # the usual document: no ABC check (hints run per event and waiting pod)
        meta = obj.get("metadata")
        if type(meta) is dict:
            return meta
    else:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _allocated(status: object) -> bool:
    if type(status) is dict or isinstance(status, Mapping):
        return status.get("allocation") is not None
    return False


class HintsMixin:
    manager: DraManager
    enabled: bool

    def pod_claims(self, pod: PodInfo) -> list[ResourceClaim]:
        raise NotImplementedError

    def _hint_claim_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        uid = _meta(new).get("uid")
        try:
            uses = any(c.meta.uid == uid for c in self.pod_claims(pod))
        except ClaimNotCreated:
            return QueueingHint.SKIP
        old_status = old.get("status") if type(old) is dict or isinstance(old, Mapping) else None
        new_status = new.get("status") if type(new) is dict or isinstance(new, Mapping) else None
        if _allocated(old_status) and not _allocated(new_status):
            return QueueingHint.QUEUE  # deallocated: its devices are free again
        if not uses:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if (old_status or {}) == (new_status or {}) else QueueingHint.QUEUE

    def _hint_pod_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        if not isinstance(new, PodInfo) or new.uid != pod.uid:
            return QueueingHint.SKIP
        try:
            self.pod_claims(new)
        except ClaimNotCreated:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
