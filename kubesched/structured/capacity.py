"""Consumable capacity (DRAConsumableCapacity), as upstream's consumable_capacity.go decides it.

Each capacity of a device is consumed by an allocation: the request rounded up by the
capacity's ``requestPolicy`` (``validRange``: at least ``min``, then multiples of ``step`` from
``min``; ``validValues``: the first value not below the request), the policy's ``default`` when
the request names no such capacity, or the whole capacity when there is neither. The sum over
allocated, in-flight and this allocation must stay within the capacity. A request for a
capacity the device lacks makes the device ineligible.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from kubesched.objects.dra import BINARY_SI, CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity, Quantity
from kubesched.objects.quantity import value as int_value

from .types import ConsumedCapacity

__all__ = ["request_fits_capacity", "consumed_capacity_from_request", "calculate_consumed_capacity", "violates_policy", "MissingCapacity"]


class MissingCapacity(Exception):
    """``some requested capacity has not been defined`` (the device is skipped, not an error)."""


def _format(quantity: Quantity) -> str:
    text = quantity.text
    if text.endswith(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")):
        return BINARY_SI
    if "e" in text or "E" in text:
        return "DecimalExponent"
    return "DecimalSI"


def _same(a: Quantity, b: Quantity) -> bool:
    """Go's ``==`` on two quantities as the informer decodes them: value and format."""
    return a.number == b.number and _format(a) == _format(b)


def _round_up_range(requested: Quantity, valid_range: CapacityRequestPolicyRange) -> Quantity:
    assert valid_range.min is not None
    if requested.number < valid_range.min.number:
        return valid_range.min
    if valid_range.step is None:
        return requested
    wanted = int_value(requested.value)
    step = int_value(valid_range.step.value)
    low = int_value(valid_range.min.value)
    added = wanted - low
    n = _go_div(added, step)
    if _go_mod(added, step) != 0:
        n += 1
    return Quantity.of(low + step * n, BINARY_SI)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def _round_up_values(requested: Quantity, values: tuple[Quantity, ...]) -> Quantity:
    for valid in values:
        if requested.number <= valid.number:
            return valid
    return requested


def calculate_consumed_capacity(requested: Quantity | None, capacity: DeviceCapacity) -> Quantity:
    """``calculateConsumedCapacity``."""
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return _round_up_range(requested, policy.valid_range)
    if policy.valid_values:
        return _round_up_values(requested, policy.valid_values)
    return requested


def violates_policy(consumed: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and _same(consumed, policy.default):
        return False
    if policy.valid_range is not None:
        rng = policy.valid_range
        if rng.max is not None and consumed.number > rng.max.number:
            return True
        if rng.step is not None and rng.min is not None:
            added = int_value(consumed.value) - int_value(rng.min.value)
            if _go_mod(added, int_value(rng.step.value)) != 0:
                return True
        return False
    if policy.valid_values:
        return not any(consumed.number == v.number for v in policy.valid_values)
    return False


def request_fits_capacity(
    current: Mapping[str, int | Fraction] | None,
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    allocating: Mapping[str, int | Fraction] | None,
) -> bool:
    """``CmpRequestOverCapacity``; ``MissingCapacity`` when a requested capacity is unknown."""
    if requests:
        for name in requests:
            if name not in capacity:
                raise MissingCapacity()
    elif current is None and allocating is None and all(cap.request_policy is None for cap in capacity.values()):
        return True  # nothing requested, nothing consumed: each capacity is consumed whole, which fits
    for name, cap in capacity.items():
        consumed = calculate_consumed_capacity(requests.get(name) if requests else None, cap)
        if violates_policy(consumed, cap.request_policy):
            return False
        total = consumed.number
        if current is not None:
            total += current.get(name, 0)
        if allocating is not None and name in allocating:
            total += allocating[name]
        if total > cap.value.number:
            return False
    return True


def consumed_capacity_from_request(requests: Mapping[str, Quantity] | None, capacity: Mapping[str, DeviceCapacity]) -> dict[str, Quantity]:
    """``GetConsumedCapacityFromRequest``: what an allocation records, per capacity."""
    return {name: calculate_consumed_capacity(requests.get(name) if requests else None, cap) for name, cap in capacity.items()}


def as_consumed(consumed: Mapping[str, Quantity]) -> ConsumedCapacity:
    return {name: q.number for name, q in consumed.items()}
