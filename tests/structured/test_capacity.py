"""Consumable capacity rules, as upstream's consumable_capacity_test.go tables state them."""

from __future__ import annotations

import pytest

from kubesched.objects.dra import CapacityRequestPolicy, CapacityRequestPolicyRange, DeviceCapacity, Quantity
from kubesched.objects.dra.quantity import parse_dra_quantity
from kubesched.structured.capacity import (
    MissingCapacity,
    calculate_consumed_capacity,
    consumed_capacity_from_request,
    request_fits_capacity,
    violates_policy,
)


def q(text: str) -> Quantity:
    return parse_dra_quantity(text)


ONE, TWO, THREE = q("1"), q("2"), q("3")


def in_range(default: Quantity, low: Quantity, high: Quantity | None = None, step: Quantity | None = None) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(default, (), CapacityRequestPolicyRange(low, high, step))


def in_set(default: Quantity, *values: Quantity) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(default, values, None)


@pytest.mark.parametrize(
    ("name", "requested", "policy", "violates"),
    [
        ("no constraint", ONE, None, False),
        ("less than maximum", ONE, in_range(ONE, ONE, TWO), False),
        ("more than maximum", TWO, in_range(ONE, ONE, ONE), True),
        ("in set", ONE, in_set(ONE, ONE), False),
        ("not in set", TWO, in_set(ONE, ONE), True),
    ],
)
def test_violate_capacity_request_policy(name: str, requested: Quantity, policy: CapacityRequestPolicy | None, violates: bool) -> None:
    assert violates_policy(requested, policy) is violates


@pytest.mark.parametrize(
    ("name", "requested", "capacity", "policy", "expect"),
    [
        ("empty", None, ONE, CapacityRequestPolicy(None, (), None), ONE),
        ("min in range", None, TWO, in_range(ONE, ONE), ONE),
        ("default in set", None, TWO, in_set(ONE, ONE), ONE),
        ("more than min in range", TWO, TWO, in_range(ONE, ONE), TWO),
        ("less than min in range", ONE, TWO, in_range(ONE, TWO), TWO),
        ("with step (round up)", TWO, THREE, in_range(ONE, ONE, step=TWO), THREE),
        ("with step (no remaining)", TWO, TWO, in_range(ONE, ONE, step=ONE), TWO),
        ("valid value in set", TWO, THREE, in_set(ONE, ONE, TWO, THREE), TWO),
        ("set (round up)", TWO, THREE, in_set(ONE, ONE, THREE), THREE),
        ("larger than set", THREE, THREE, in_set(ONE, ONE, TWO), THREE),
    ],
)
def test_calculate_consumed_capacity(name: str, requested: Quantity | None, capacity: Quantity, policy: CapacityRequestPolicy, expect: Quantity) -> None:
    assert calculate_consumed_capacity(requested, DeviceCapacity(capacity, policy)).value == expect.value


def test_consumed_capacity_from_request_covers_every_capacity_of_the_device() -> None:
    capacities = {
        "capacity0": DeviceCapacity(TWO, in_range(TWO, ONE)),  # requested: the request
        "capacity1": DeviceCapacity(TWO, in_range(ONE, ONE)),  # not requested: the default
        "dummy": DeviceCapacity(ONE),  # not requested, no policy: all of it
    }
    consumed = consumed_capacity_from_request({"capacity0": ONE, "dummy": ONE}, capacities)
    assert {name: value.value for name, value in consumed.items()} == {"capacity0": 1, "capacity1": 1, "dummy": 1}


def test_request_for_an_unknown_capacity_is_reported() -> None:
    with pytest.raises(MissingCapacity):
        request_fits_capacity(None, {"memory": ONE}, {"bandwidth": DeviceCapacity(TWO)}, None)


def test_allocated_and_allocating_capacity_add_up() -> None:
    capacity = {"bw": DeviceCapacity(THREE)}
    assert request_fits_capacity({"bw": ONE.value}, {"bw": ONE}, capacity, {"bw": ONE.value})
    assert not request_fits_capacity({"bw": TWO.value}, {"bw": ONE}, capacity, {"bw": ONE.value})
