"""What one allocation chose, independent of the claim objects it was computed for: reused for
other claims with the same spec on the same node (the allocator's memo), and turned into
``AllocationResult`` records only when read."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.objects.dra import Device, DeviceClass, DeviceToleration, Quantity, ResourceSlice

from .types import DeviceID

__all__ = ["PickedDevice", "ClaimPicks"]


@dataclass(slots=True, frozen=True, eq=False)
class PickedDevice:
    request: str  # "<request>" or "<request>/<subrequest>"
    id: DeviceID
    device: Device
    slice: ResourceSlice
    tolerations: tuple[DeviceToleration, ...]
    shared: bool  # one share of a device with allowMultipleAllocations (gets a share id)
    consumed_capacity: dict[str, Quantity] | None
    admin_access: bool | None


@dataclass(slots=True, frozen=True, eq=False)
class ClaimPicks:
    devices: tuple[PickedDevice, ...]
    # Per request of the claim: the (sub)request name used and its class.
    chosen: tuple[tuple[str, DeviceClass | None], ...]
    # For firstAvailable requests: (request name, index of the subrequest chosen).
    selected_subs: tuple[tuple[str, int], ...]
