"""DynamicResources' PreBind (upstream's ``PreBind`` and ``bindClaim``): what Reserve only
assumed is written through the cluster client (``ResourceClaimWriter``).

For each claim not yet reserved for the pod: the extended-resource claim is created first
(when the node needed one), then the claim gets the delete-protection finalizer, its
allocation (if this cycle made one) and the pod in ``status.reservedFor``. The stored claim
is assumed at once (the devices stay taken until the informer catches up) and the in-flight
allocation dropped. The pod's ``extendedResourceClaimStatus`` records which request serves
which container. Any refusal is an error: the pod is unreserved and retried.
"""

from __future__ import annotations

from ...framework import Code, CycleState, Handle, Status
from ...framework.features import Features
from ...framework.handle import JSONObject, ResourceClaimWriter
from ...objects.dra import ResourceClaim, allocation_to_json
from ...objects.errors import ObjectError
from ...objects.pod import PodInfo
from .binding_conditions import DEFAULT_BINDING_TIMEOUT, pre_bind_wait
from .extended_claim import claim_document
from .group_claims import POD_GROUPS, is_reserved_for_pod
from .manager import DraManager
from .names import SPECIAL_CLAIM_NAME
from .skipped import PRE_BIND_SKIP
from .state import STATE, DraState

__all__ = ["BindingMixin", "BindError"]



class BindError(Exception):
    """A claim could not be written; ``str`` is upstream's error text."""


class BindingMixin:
    handle: Handle
    manager: DraManager
    features: Features
    enabled: bool
    _writer: ResourceClaimWriter | None = None
    _writer_checked: bool = False
    binding_timeout: float = DEFAULT_BINDING_TIMEOUT  # DynamicResourcesArgs.bindingTimeout

    def writer(self) -> ResourceClaimWriter | None:
        """The cluster client when it writes claims (checked once: a protocol check is slow)."""
        if not self._writer_checked:
            client = self.handle.client
            self._writer = client if isinstance(client, ResourceClaimWriter) else None
            self._writer_checked = True
        return self._writer

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s = state.get(STATE)
        if s is None or s.empty() or not self.enabled:
            return PRE_BIND_SKIP
        return None

    def explain_binding(self, state: CycleState, pod: PodInfo, node_name: str) -> dict[str, object] | None:
        """``allocations`` for --explain and the reports: each claim of the pod after PreBind, with
        the devices it got (``request``, ``driver``, ``pool``, ``device``; ``adminAccess`` and
        ``consumedCapacity`` where set) and the allocation's node selector."""
        s = state.get(STATE)
        if s is None or s.empty():
            return None
        out: dict[str, object] = {}
        lines: list[str] = []  # one line per device, for the reports (``devices``)
        for claim in s.claims:
            allocation = claim.allocation
            if allocation is None or claim.name == SPECIAL_CLAIM_NAME:
                continue
            devices: list[dict[str, object]] = []
            for r in allocation.devices:
                device: dict[str, object] = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
                if r.admin_access:
                    device["adminAccess"] = True
                if r.consumed_capacity:
                    device["consumedCapacity"] = {k: q.text for k, q in r.consumed_capacity.items()}
                devices.append(device)
                lines.append(f"{claim.key} {r.request}: {r.driver}/{r.pool}/{r.device}"
                             + (" (admin access)" if r.admin_access else ""))
            entry: dict[str, object] = {"devices": devices}
            if allocation.node_selector is not None:
                entry["nodeSelector"] = allocation.node_selector.raw
            out[claim.key] = entry
        return {"allocations": out, "devices": lines} if out else None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if not self.enabled:
            return None
        s = state.get(STATE)
        if s is None:
            return Status(Code.ERROR, "error reading 'DynamicResources' from cycle-state: not found")
        if s.empty():
            return None
        client = self.writer()
        group_claims = self.features.enable_dra_workload_resource_claims
        for index, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim, group_claims):
                continue
            if group_claims and self._reserved_by_group_meanwhile(s, index, pod):
                continue
            try:
                s.claims[index] = self._bind_claim(s, index, pod, node_name, client)
            except Exception as err:  # the API server's refusal, or one of upstream's checks
                return Status.as_error(err)
        return pre_bind_wait(self.handle, self.manager, self.features, s.claims, pod, node_name,
                             self.binding_timeout)

    def _reserved_by_group_meanwhile(self, s: DraState, index: int, pod: PodInfo) -> bool:
        """A claim of the pod's PodGroup that an earlier member's PreBind of the same group cycle
        already allocated and reserved for the group: the stored claim replaces this pod's copy
        and its share of the pending allocation is dropped. Upstream's bindClaim writes the
        shared allocation again for every member and the API server refuses all but the first
        ('got allocated elsewhere in the meantime'); kubesched takes the stored reservation."""
        if index not in s.shared and (s.bindings is None or index >= len(s.bindings)
                                      or s.bindings[index].resource != POD_GROUPS):
            return False
        claim = s.claims[index]
        current = self.manager.get_claim(claim.namespace, claim.name)
        if current is None or current.allocation is None or not is_reserved_for_pod(pod, current, True):
            return False
        if index in s.shared:
            self.manager.remove_pending_allocation(claim.meta.uid)
        s.claims[index] = current
        return True

    def _bind_claim(self, s: DraState, index: int, pod: PodInfo, node_name: str,
                    client: ResourceClaimWriter | None) -> ResourceClaim:
        claim = s.claims[index]
        allocation = s.allocations[index]
        is_extended = index == s.extended_index()
        if is_extended and allocation is None and not claim.spec.requests:
            return claim  # served by a device plugin on this node
        if client is None:
            raise BindError("writing ResourceClaims needs a cluster client that supports them")
        pending_uid = claim.meta.uid
        stored = False
        try:
            raw: JSONObject | None
            found = s.node_allocations.get(node_name)
            if is_extended and claim.name == SPECIAL_CLAIM_NAME:
                if found is None or found.extended_claim is None:
                    raise BindError(f"extended resource claim not found for node {node_name}")
                created = client.create_resource_claim(claim_document(found.extended_claim, found.extended_requests))
                raw = created
                claim = _record_of(self.manager, created)
                s.claims[index] = claim
            else:
                raw = self.manager.raw_claim(claim)
            if raw is None:
                raise BindError(f"claim {claim.namespace}/{claim.name} got deleted in the meantime")
            consumer: JSONObject = {"resource": "pods", "name": pod.name, "uid": pod.uid}
            if s.bindings is not None and index < len(s.bindings):
                ref = s.bindings[index]
                consumer = {"resource": ref.resource, "name": ref.name, "uid": ref.uid}
                if ref.api_group:
                    consumer = {"apiGroup": ref.api_group, **consumer}
            allocation_json = allocation_to_json(allocation) if allocation is not None else None
            if allocation is not None and allocation_json is not None:
                self.manager.written_allocation(allocation_json, allocation)
            written = client.bind_resource_claim(
                raw, allocation_json, consumer,
                set_allocation_timestamp=(self.features.enable_dra_device_binding_conditions
                                          and self.features.enable_dra_resource_claim_device_status))
            current = _held(self.manager, written)
            if current is not None:
                bound = current
            else:
                bound = _parse_with(self.manager, written)
                self.manager.assume_claim(written, bound)
            stored = True
            if is_extended and found is not None:
                client.patch_pod_extended_resource_claim_status(pod, {
                    "requestMappings": [m.to_json() for m in found.mappings],
                    "resourceClaimName": bound.name,
                })
            return bound
        finally:
            if allocation is not None:  # the last sharer, or stored now: no longer in flight
                self.manager.remove_pending_allocation(pending_uid, force=stored)


def _held(manager: DraManager, doc: JSONObject) -> ResourceClaim | None:
    """The manager's record of ``doc`` when the claim store holds that very document: the
    simulated API server stores a write at once and the manager parses it on its way in, so
    PreBind reads that record rather than parsing the document again. None in ``run`` (the
    informer delivers the write later) or when the manager refused the document."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        return None
    current = manager.get_claim(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
    if current is None or current.meta.uid != (meta.get("uid") or "") or manager.raw_claim(current) is not doc:
        return None
    return current


def _record_of(manager: DraManager, doc: JSONObject) -> ResourceClaim:
    """The record of a claim PreBind just created: the manager's when it has it (``_held``), else
    parsed (through the manager: its spec records are shared)."""
    held = _held(manager, doc)
    return held if held is not None else _parse_with(manager, doc)


def _parse_with(manager: DraManager, doc: JSONObject) -> ResourceClaim:
    try:
        return manager.parse_claim(doc)
    except ObjectError as err:
        raise BindError(f"the API server returned a claim kubesched cannot read: {err}") from None
