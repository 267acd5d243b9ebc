"""GpuShare: GPU sharing on the plugin SDK (PreFilter, Filter, Reserve/Unreserve).

Alibaba's open-gpu-share as the FGD paper's simulator runs it: a node's devices each
hold 1,000 milli-GPU; a pod asking for a share (less than 1,000) goes onto one device
with room for it, a pod asking for whole GPUs takes that many idle devices, and a pod
that names GPU models runs only on nodes of those models. NodeResourcesFit already
checks the node's GPU in total (the ``kubesched.io/gpu-milli`` extended resource);
GpuShare checks the devices, which only it knows.

* **PreFilter** reads the pod's request (``request.gpu_request``) and hands it, with
  the device state, to the policies through the ``CycleState`` (``cycle.GPU_CYCLE``);
  a pod that wants no GPU skips the Filter.
* **Filter** rejects nodes of another model (unresolvable) and nodes whose devices
  cannot hold the request (preemption could help).
* **Reserve** takes the devices: the ones the policy chose (``cycle.DEVICE_CHOOSER``),
  or the best fit. **Unreserve** gives them back.
* Bound pods the scheduler did not place (a snapshot's) are accounted on the devices
  the best fit picks; a deleted pod's devices are freed (``PodEventHandler``).
"""

from __future__ import annotations

import numpy as np

from kubesched.framework import (
    SKIP,
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeTableView,
    NodeVerdicts,
    PluginSpec,
    PreFilterResult,
    SnapshotView,
    Status,
)
from kubesched.objects import NodeInfo, PodInfo

from .cycle import DEVICE_CHOOSER, GPU_CYCLE, GpuCycle
from .devices import DeviceState, best_fit_devices
from .request import GPU_MODEL, GpuRequest, GpuRequestError, gpu_request

__all__ = ["NAME", "GpuShare", "new", "spec", "WRONG_MODEL", "NO_ROOM"]

NAME = "GpuShare"
WRONG_MODEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't have the GPU model the pod asks for")
NO_ROOM = Status(Code.UNSCHEDULABLE, "node(s) didn't have GPU devices with room for the pod")


class GpuShare:
    """Filter and Reserve over per-device GPU state; both Filter forms."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.devices = DeviceState()
        handle.add_pod_handler(self)

    # -- PreFilter ------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        self.devices.sync(snapshot.table)
        try:
            request = gpu_request(pod)
        except GpuRequestError as err:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(err))
        state.write(GPU_CYCLE, GpuCycle(request, self.devices))
        return None, (None if request.wants_gpu else SKIP)

    # -- Filter -----------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        table = snapshot.table
        self.devices.sync(table)
        request = self._request(state, pod)
        if not request.wants_gpu:
            return NodeVerdicts.all_pass(table.size)
        fits = self.devices.fits(request)[: table.size]
        if not request.models:
            return NodeVerdicts.from_mask(fits, NO_ROOM)
        codes = np.where(model_mask(table, request), np.where(fits, 0, 2), 1).astype(np.int32)
        return NodeVerdicts(codes, [WRONG_MODEL, NO_ROOM])

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        self.devices.sync(self.handle.snapshot().table)
        request = self._request(state, pod)
        if not request.wants_gpu:
            return None
        if not request.accepts(node.node.labels.get(GPU_MODEL, "")):
            return WRONG_MODEL
        if not self.devices.fits(request, np.array([node.row], dtype=np.int64))[0]:
            return NO_ROOM
        return None

    # -- Reserve ------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        request = self._request(state, pod)
        if not request.wants_gpu:
            return None
        table = self.handle.snapshot().table
        self.devices.sync(table)
        row = table.name_rows().get(node_name)
        if row is None:
            return Status(Code.UNSCHEDULABLE, f"node {node_name} is gone")
        self.devices.release(pod.uid)  # a retried reservation replaces the old one
        chooser = state.get(DEVICE_CHOOSER)
        devices = (chooser.choose(self.devices, row, request) if chooser is not None
                   else best_fit_devices(self.devices.free[row], request))
        if devices is None:
            return Status(Code.UNSCHEDULABLE, f"no GPU devices on {node_name} have room for the pod")
        self.devices.assign(pod.uid, row, devices, request)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.devices.release(pod.uid)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # A pod that left freed its devices; a node joined or changed its GPUs or model.
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                                              | ActionType.UPDATE_NODE_LABEL)),
        ]

    # -- pods the scheduler did not place -------------------------------------------------
    def on_pod_add(self, pod: PodInfo) -> None:
        if pod.node_name:
            self._learn(pod)

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        if new.node_name and new.uid not in self.devices.placements:
            self._learn(new)

    def on_pod_delete(self, pod: PodInfo) -> None:
        self.devices.release(pod.uid)

    def _learn(self, pod: PodInfo) -> None:
        if pod.uid in self.devices.placements:
            return
        try:
            request = gpu_request(pod)
        except GpuRequestError:
            return  # NodeResourcesFit accounts its total; no device can say which part
        if not request.wants_gpu:
            return
        table = self.handle.snapshot().table
        self.devices.sync(table)
        row = table.name_rows().get(pod.node_name)
        if row is not None:
            self.devices.place_best_fit(pod.uid, row, request)

    def _request(self, state: CycleState, pod: PodInfo) -> GpuRequest:
        cycle = state.get(GPU_CYCLE)
        if cycle is not None:
            return cycle.request
        try:
            return gpu_request(pod)
        except GpuRequestError:
            return GpuRequest(0, 0)


def model_mask(table: NodeTableView, request: GpuRequest) -> BoolArray:
    """Rows whose GPU model the request accepts (every row when it names none)."""
    if not request.models:
        return np.ones(table.size, dtype=bool)

    def compute() -> BoolArray:
        ids, value_ids = table.label_column(GPU_MODEL)
        wanted = [value_ids[m] for m in request.models if m in value_ids]
        return np.asarray(np.isin(ids, wanted), dtype=bool)

    return table.node_derived((NAME, "models", request.models), compute)


def new(args: None, handle: Handle) -> GpuShare:
    return GpuShare(handle)


spec = PluginSpec(NAME, new)
