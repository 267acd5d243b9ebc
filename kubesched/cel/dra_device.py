"""The DRA device environment (``k8s.io/dynamic-resource-allocation/cel``), one declaration set on
Kubernetes' CEL: the ``device`` variable (``driver``, ``allowMultipleAllocations`` with
DRAConsumableCapacity, ``attributes[domain][id]`` and ``capacity[domain][id]``), its declared
sizes (the API's length and count limits, which the cost estimate assumes), and a result of
``bool`` or the unknown type (DRAListTypeAttributes is off at v1.36: not ``dyn``, attributes
are ``any`` with no ``includes``)."""

from __future__ import annotations

from functools import cache

from .celtypes import ANY, BOOL, STRING, CelType, map_of, struct
from .declarations import QUANTITY
from .environment import Environment
from .estimates import DeclSize

__all__ = ["DEVICE", "DEVICE_ENVIRONMENT", "DEVICE_FIELDS", "DEVICE_SIZES", "VARIABLE", "device_environment", "device_sizes"]

VARIABLE = "device"
DEVICE = struct("kubernetes.DRADevice")
# DRAConsumableCapacity is on at v1.36 (allowMultipleAllocations declared).
DEVICE_FIELDS: dict[str, CelType] = {
    "driver": STRING,
    "allowMultipleAllocations": BOOL,
    "attributes": map_of(STRING, map_of(STRING, ANY)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
}


def _device_sizes(driver: int, domain: int, ident: int, attribute: int, domains: int, ids: int) -> DeclSize:
    value = DeclSize(attribute, attribute=True)
    inner_attributes = DeclSize(ids, key=DeclSize(ident), elem=value)
    inner_capacity = DeclSize(ids, key=DeclSize(ident), elem=DeclSize(0))
    return DeclSize(0, fields=(
        ("driver", DeclSize(driver)),
        ("allowMultipleAllocations", DeclSize(1)),
        ("attributes", DeclSize(domains, key=DeclSize(domain), elem=inner_attributes)),
        ("capacity", DeclSize(domains, key=DeclSize(domain), elem=inner_capacity)),
    ))


# DriverNameMaxLength, DeviceMaxDomainLength, DeviceMaxIDLength, DeviceAttributeMaxValueLength,
# ResourceSliceMaxAttributesAndCapacitiesPerDevice.
DEVICE_SIZES = _device_sizes(63, 63, 32, 64, 32, 32)


def device_sizes(driver: int, domain: int, ident: int, attribute: int, domains: int, ids: int) -> DeclSize:
    """The sizes of one device's values (for its own bound on an evaluation's cost)."""
    return _device_sizes(driver, domain, ident, attribute, domains, ids)


_RESULT_KINDS = frozenset({"bool", "any"})

DEVICE_ENVIRONMENT = Environment({VARIABLE: DEVICE}, {DEVICE: DEVICE_FIELDS}, {VARIABLE: DEVICE_SIZES}, _RESULT_KINDS)


@cache
def device_environment(consumable_capacity: bool = True) -> Environment:
    """The environment under the DRAConsumableCapacity gate: without it, the v1.33 device type
    (no ``allowMultipleAllocations``)."""
    if consumable_capacity:
        return DEVICE_ENVIRONMENT
    fields = {k: v for k, v in DEVICE_FIELDS.items() if k != "allowMultipleAllocations"}
    return Environment({VARIABLE: DEVICE}, {DEVICE: fields}, {VARIABLE: DEVICE_SIZES}, _RESULT_KINDS)
