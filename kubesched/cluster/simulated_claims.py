"""The API server's and the resourceclaim controller's side of DRA, in memory (``simulate``).

``SimulatedClaims`` is the simulated cluster's ``ResourceClaimWriter``: what
DynamicResources' PreBind, Unreserve and PostFilter write lands in the ResourceClaim
store at once, each write a cluster event, so the next pod sees the devices taken (or
freed); PreBind's and PostFilter's writes raise what the API server would answer. Names for ``generateName`` follow the deterministic rule of
``plugins.dynamicresources.claims``. ``create_template_claims`` plays the resourceclaim
controller before the first cycle (``resourceclaim_controller``).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from typing import Any

from ..cache.object_store import ObjectStore, ObjectStores
from ..clock import VirtualClock
from ..framework.handle import JSONObject
from ..objects.dra import DELETE_PROTECTION_FINALIZER
from ..objects.pod import PodInfo
from ..plugins.dynamicresources.claims import deterministic_name
from ..objects.podgroup import PodGroup
from ..plugins.dynamicresources.names import API_VERSION, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE
from .resourceclaim_controller import claim_uid, instantiate_pod_group_claims, instantiate_template_claims
from .snapshot import ClusterSnapshot

__all__ = ["SimulatedClaims", "ClaimWriteError", "create_template_claims"]


class ClaimWriteError(Exception):
    """A claim write the API server would refuse; ``str`` is upstream's error text."""


def _meta(doc: Mapping[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata")
    return dict(meta) if isinstance(meta, Mapping) else {}


def _status(doc: Mapping[str, Any]) -> dict[str, Any]:
    status = doc.get("status")
    return dict(status) if isinstance(status, Mapping) else {}


class _Taken:
    """The names of the claims stored in one namespace, as a container (no list built)."""

    def __init__(self, store: ObjectStore, namespace: str) -> None:
        self.store = store
        self.namespace = namespace

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.store.get(self.namespace, name) is not None


class SimulatedClaims:
    clock: VirtualClock
    object_stores: ObjectStores | None

    extended_claim_statuses: dict[str, JSONObject]

    def _claim_store(self) -> ObjectStore:
        store = self.object_stores.find(API_VERSION, RESOURCE_CLAIM) if self.object_stores is not None else None
        if store is None:
            raise ClaimWriteError("no ResourceClaim store: the DynamicResources plugin is not enabled")
        return store

    def _current(self, claim: JSONObject) -> dict[str, Any]:
        meta = _meta(claim)
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        found = self._claim_store().get(namespace, name)
        if found is None:
            raise ClaimWriteError(f'resourceclaims.resource.k8s.io "{name}" not found')
        return dict(found)  # writers copy the parts they change (metadata, status): the stored object stays as it was

    def create_resource_claim(self, claim: JSONObject) -> JSONObject:
        """The claim as stored: a new document and ``metadata`` (name, namespace and uid set), no
        ``status``. The other parts (``spec``, annotations, owner references) are stored as sent,
        not copied: the caller (PreBind) builds the document for this call and keeps no hold on it,
        and stored documents are never changed in place (writers copy what they change)."""
        store = self._claim_store()
        doc = {key: value for key, value in claim.items() if key != "status"}
        meta = _meta(doc)
        namespace = str(meta.get("namespace") or "default")
        name = deterministic_name(namespace, str(meta.get("generateName") or ""), _Taken(store, namespace))
        meta.update(name=name, namespace=namespace, uid=claim_uid(namespace, name))
        doc["metadata"] = meta
        store.upsert(doc)
        return doc

    def bind_resource_claim(self, claim: JSONObject, allocation: JSONObject | None, consumer: JSONObject, *,
                            set_allocation_timestamp: bool = True) -> JSONObject:
        doc = self._current(claim)
        meta = _meta(doc)
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        if meta.get("deletionTimestamp"):
            raise ClaimWriteError(f"claim {key} got deleted in the meantime")
        status = _status(doc)
        if allocation is not None:
            if status.get("allocation") is not None:
                raise ClaimWriteError(f"claim {key} got allocated elsewhere in the meantime")
            finalizers = list(meta.get("finalizers") or [])
            if DELETE_PROTECTION_FINALIZER not in finalizers:
                meta["finalizers"] = [*finalizers, DELETE_PROTECTION_FINALIZER]
                doc["metadata"] = meta
            status["allocation"] = allocation  # fresh from the caller: stored as given
        status["reservedFor"] = [*(status.get("reservedFor") or []), dict(consumer)]
        if set_allocation_timestamp:
            current = status.get("allocation")
            if not isinstance(current, dict):
                raise ClaimWriteError(f"claim {key} got deallocated elsewhere in the meantime")
            if not current.get("allocationTimestamp"):
                current["allocationTimestamp"] = _timestamp(int(self.clock.now()))
        doc["status"] = status
        self._claim_store().upsert(doc)
        return doc

    def patch_pod_extended_resource_claim_status(self, pod: PodInfo, status: JSONObject) -> None:
        self.extended_claim_statuses[pod.key] = dict(status)

    def delete_resource_claim(self, claim: JSONObject) -> None:
        """upstream's ``deleteClaim``: its first write (the finalizer's removal) names the claim."""
        try:
            doc = self._current(claim)
        except ClaimWriteError as err:
            meta = _meta(claim)
            raise ClaimWriteError(f"update resourceclaim {meta.get('namespace') or 'default'}/{meta.get('name')}: "
                                  f"{err}") from None
        self._claim_store().delete(doc)

    def delete_resource_claim_in_background(self, claim: JSONObject) -> None:
        try:
            self.delete_resource_claim(claim)
        except ClaimWriteError:
            pass

    def unreserve_resource_claim(self, claim: JSONObject, pod_uid: str) -> None:
        try:
            doc = self._current(claim)
        except ClaimWriteError:
            return
        status = _status(doc)
        status["reservedFor"] = [r for r in status.get("reservedFor") or [] if not (isinstance(r, Mapping) and r.get("uid") == pod_uid)]
        doc["status"] = status
        self._claim_store().upsert(doc)

    def deallocate_resource_claim(self, claim: JSONObject) -> None:
        """PostFilter's ``UpdateStatus``: raises (NotFound's text) when the claim is gone."""
        doc = self._current(claim)
        status = _status(doc)
        for key in ("reservedFor", "allocation", "devices"):
            status.pop(key, None)
        doc["status"] = status
        self._claim_store().upsert(doc)


@functools.lru_cache(maxsize=1024)
def _timestamp(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def create_template_claims(snapshot: ClusterSnapshot, pod_group_claims: bool = False) -> None:
    """The resourceclaim controller's work on a snapshot: claims for templates, recorded in the
    pods; with ``pod_group_claims`` (DRAWorkloadResourceClaims) the PodGroups' claims first,
    recorded in the groups and in their members that share them."""
    claims = snapshot.objects.get(RESOURCE_CLAIM, [])
    templates = snapshot.objects.get(RESOURCE_CLAIM_TEMPLATE, [])
    groups: dict[tuple[str, str], PodGroup] | None = None
    if pod_group_claims:
        made, changed = instantiate_pod_group_claims(snapshot.pod_groups, templates, claims)
        if made:
            claims = snapshot.objects.setdefault(RESOURCE_CLAIM, [])
            claims.extend(made)
        snapshot.pod_groups = [changed.get((g.namespace, g.name), g) for g in snapshot.pod_groups]
        groups = {(g.namespace, g.name): g for g in snapshot.pod_groups}
    pods = [*snapshot.bound_pods, *snapshot.pending_pods]
    if not any(p.resource_claims for p in pods):
        return
    created, updated = instantiate_template_claims(pods, templates, claims, groups)
    if not created and not updated:
        return
    if created:
        snapshot.objects.setdefault(RESOURCE_CLAIM, []).extend(created)
    snapshot.bound_pods = [updated.get(p.uid, p) for p in snapshot.bound_pods]
    snapshot.pending_pods = [updated.get(p.uid, p) for p in snapshot.pending_pods]
