"""Claim constraints: ``matchAttribute`` and ``distinctAttribute``, with upstream's bookkeeping.

A constraint applies to the requests it names (all requests when it names none; a subrequest
matches its request's name or ``request/subrequest``). ``matchAttribute`` remembers the first
device's value and counts devices; ``distinctAttribute`` remembers one value per request name
(the last device added for it) and compares a new device only with those, and removing a device
forgets its request's value. A device without the attribute satisfies neither.
"""

from __future__ import annotations

from kubesched.objects.dra import Device, DeviceAttribute

__all__ = ["Constraint", "MatchAttributeConstraint", "DistinctAttributeConstraint", "lookup_attribute"]


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """The attribute ``domain/name``; also the bare ``name`` when the domain is the driver."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class Constraint:
    __slots__ = ("request_names", "attribute_name", "num_devices")

    def __init__(self, request_names: tuple[str, ...], attribute_name: str) -> None:
        self.request_names = frozenset(request_names)
        self.attribute_name = attribute_name
        self.num_devices = 0

    def applies(self, request: str, sub_request: str) -> bool:
        if not self.request_names:
            return True
        if not sub_request:
            return request in self.request_names
        return request in self.request_names or f"{request}/{sub_request}" in self.request_names

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        raise NotImplementedError

    def remove(self, request: str, sub_request: str) -> None:
        raise NotImplementedError


class MatchAttributeConstraint(Constraint):
    __slots__ = ("attribute",)

    def __init__(self, request_names: tuple[str, ...], attribute_name: str) -> None:
        super().__init__(request_names, attribute_name)
        self.attribute: DeviceAttribute | None = None

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute_name)
        if attribute is None:
            return False
        if self.num_devices == 0:
            self.attribute = attribute
            self.num_devices = 1
            return True
        if attribute != self.attribute:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if not self.applies(request, sub_request):
            return
        self.num_devices -= 1


class DistinctAttributeConstraint(Constraint):
    __slots__ = ("attributes",)

    def __init__(self, request_names: tuple[str, ...], attribute_name: str) -> None:
        super().__init__(request_names, attribute_name)
        self.attributes: dict[str, DeviceAttribute] = {}

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute_name)
        if attribute is None:
            return False
        if self.num_devices == 0:
            self.attributes[request] = attribute
            self.num_devices = 1
            return True
        if any(attribute == seen for seen in self.attributes.values()):
            return False
        self.attributes[request] = attribute
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str) -> None:
        if not self.applies(request, sub_request):
            return
        self.attributes.pop(request, None)
        self.num_devices -= 1
