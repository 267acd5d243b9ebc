"""What GpuShare and the policies hand each other during one scheduling cycle.

GpuShare owns the device state; a policy is a separate Score plugin. They meet in the
``CycleState``, as upstream's plugins do: GpuShare's PreFilter writes the pod's GPU
request and the device state under ``GPU_CYCLE``; a policy that has an opinion on
*which device* gets a share writes a ``DeviceChooser`` under ``DEVICE_CHOOSER``, and
GpuShare's Reserve asks it (open-gpu-share's ``allocateGpuIdFunc``). Without one,
Reserve takes the best-fit device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kubesched.framework import CycleState, StateKey

from .devices import DeviceState
from .request import GpuRequest

__all__ = ["DEVICE_CHOOSER", "GPU_CYCLE", "NOT_ENABLED", "DeviceChooser", "GpuCycle", "gpu_cycle"]


@dataclass(frozen=True, slots=True)
class GpuCycle:
    """The pod's GPU request and the device state, for this cycle."""

    request: GpuRequest
    devices: DeviceState


class DeviceChooser(Protocol):
    """Which devices of the node at ``row`` get ``request``; None when none can hold it."""

    def choose(self, devices: DeviceState, row: int, request: GpuRequest) -> tuple[int, ...] | None: ...


GPU_CYCLE: StateKey[GpuCycle] = StateKey("kubesched.io/gpushare")
DEVICE_CHOOSER: StateKey[DeviceChooser] = StateKey("kubesched.io/gpushare-device-chooser")

NOT_ENABLED = "GpuShare must be enabled in the profile: it keeps the GPU devices the GPU policies score"


def gpu_cycle(state: CycleState) -> GpuCycle:
    """What GpuShare's PreFilter wrote; a policy without GpuShare is a configuration error."""
    cycle = state.get(GPU_CYCLE)
    if cycle is None:
        raise LookupError(NOT_ENABLED)
    return cycle
