"""The allocator skips pools it knows no device can be taken from (``pool_versions``,
``exhausted.pool_exhausted``), and its memo follows pool versions through the allocated state's
changes. Neither may change a decision: random clusters and claim sequences are allocated by an
allocator whose index lives across the sequence and by one that starts afresh at every step
without skipping, and must get the same results, errors included."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.objects.dra import AllocationResult, ResourceClaim, ResourceSlice
from kubesched.structured import types
from kubesched.structured import (
    AllocatedState,
    AllocationError,
    Allocator,
    Features,
    SliceIndex,
)

from .allocator_cases import Lister
from .allocator_fixtures import (
    CLASS_A,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    TAINT_NO_SCHEDULE,
    TOLERATION_NO_SCHEDULE,
    claim,
    device,
    device_class,
    node,
    resource_slice,
)

Outcome = str | None | list[list[tuple[object, ...]]]


def _device(rng: random.Random, name: str, counters: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if counters and rng.random() < 0.8:
        consumed = {c: {"value": str(rng.randint(0, 2))} for c in ("c1", "c2") if rng.random() < 0.8}
        fields["consumesCounters"] = [{"counterSet": "cs", "counters": consumed or {"c1": {"value": "1"}}}]
    capacity: dict[str, Any] | None = None
    if rng.random() < 0.3:
        fields["allowMultipleAllocations"] = True
        policy = {"default": "1Gi", "validRange": {"min": "1Gi"}} if rng.random() < 0.5 else None
        capacity = {"memory": {"value": f"{rng.randint(1, 4)}Gi", **({"requestPolicy": policy} if policy else {})}}
    elif rng.random() < 0.3:
        capacity = {"memory": f"{rng.randint(1, 4)}Gi"}
    if rng.random() < 0.15:
        fields["taints"] = [TAINT_NO_SCHEDULE]
    return device(name, capacity, {"numa": {"int": rng.randint(0, 1)}}, **fields)


def _cluster(rng: random.Random) -> list[ResourceSlice]:
    slices: list[ResourceSlice] = []
    used: list[tuple[str, str]] = []
    for p in range(rng.randint(1, 5)):
        driver = rng.choice([DRIVER_A, DRIVER_B])
        name = f"pool-{p}"
        if used and rng.random() < 0.25:  # the same pool name under the other driver
            other_driver, name = rng.choice(used)
            driver = DRIVER_B if other_driver == DRIVER_A else DRIVER_A
            if (driver, name) in used:
                continue
        used.append((driver, name))
        where: dict[str, Any] = rng.choice([{"node_name": NODE_1}, {"node_name": None, "allNodes": True}])
        node_name = where.pop("node_name")
        counters = rng.random() < 0.7
        devices = [_device(rng, f"device-{d}", counters) for d in range(rng.randint(1, 5))]
        count = 2 if counters else 1
        slices.append(resource_slice(f"{driver}-{name}-devices", node_name, name, driver, *devices, count=count, **where))
        if counters:
            sets = [{"name": "cs", "counters": {c: {"value": str(rng.randint(1, 4))} for c in ("c1", "c2")}}]
            slices.append(resource_slice(f"{driver}-{name}-counters", node_name, name, driver, count=count, sharedCounters=sets, **where))
    return slices


def _claim(rng: random.Random, name: str) -> ResourceClaim:
    requests: list[dict[str, Any]] = []
    for r in range(rng.randint(1, 2)):
        spec: dict[str, Any] = {"deviceClassName": CLASS_A}
        if rng.random() < 0.1:
            spec["allocationMode"] = "All"
        else:
            spec["allocationMode"], spec["count"] = "ExactCount", rng.randint(1, 2)
        if rng.random() < 0.3:
            spec["capacity"] = {"requests": {"memory": f"{rng.randint(1, 2)}Gi"}}
        if rng.random() < 0.3:
            spec["tolerations"] = [TOLERATION_NO_SCHEDULE]
        if rng.random() < 0.1:
            spec["adminAccess"] = True
        if rng.random() < 0.15:  # fails to evaluate on driver-b's devices (no such domain)
            spec["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER_A}"].numa == 0'}}]
        requests.append({"name": f"r{r}", "exactly": spec})
    constraints = [{"matchAttribute": f"{DRIVER_A}/numa"}] if rng.random() < 0.3 else None
    return claim(name, *requests, constraints=constraints)


def _outcome(allocator: Allocator, node_name: str, claims: list[ResourceClaim]) -> tuple[Outcome, list[AllocationResult]]:
    try:
        results = allocator.allocate(node(node_name), claims)
    except AllocationError as err:
        return f"{type(err).__name__}: {err}", []
    if results is None:
        return None, []
    picked: list[list[tuple[object, ...]]] = [
        [(d.request, d.driver, d.pool, d.device, d.share_id, d.admin_access, tuple(sorted((k, q.text) for k, q in (d.consumed_capacity or {}).items())))
         for d in r.devices]
        for r in results
    ]
    return picked, list(results)


@pytest.mark.parametrize("seed", range(150))
def test_skipping_exhausted_pools_changes_no_decision(seed: int) -> None:
    _compare_with_reference(seed)


@pytest.mark.parametrize("seed", range(20))
def test_a_short_change_log_changes_no_decision(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(types, "_CHANGES_KEPT", 3)  # the state forgets its changes often
    _compare_with_reference(seed)


def _compare_with_reference(seed: int) -> None:
    rng = random.Random(seed)
    slices = _cluster(rng)
    classes = Lister([device_class(CLASS_A, DRIVER_A, selectors=[{"cel": {"expression": "true"}}])])  # both drivers
    skipping = SliceIndex(slices)  # kept across steps: its memo, stamps and verdicts follow the state
    state = AllocatedState()
    held: list[AllocationResult] = []
    devices = [(s.driver, s.pool.name, d.name) for s in slices for d in s.devices]
    for step in range(12):
        if held and rng.random() < 0.2:
            state.remove_allocation(held.pop(rng.randrange(len(held))))
        if devices and rng.random() < 0.2:  # taken outside this allocator: counters may go below zero
            driver, pool, name = rng.choice(devices)
            outside = claim(f"outside-{step}", {"name": "r", "exactly": {"deviceClassName": CLASS_A}},
                            status={"allocation": {"devices": {"results": [{"request": "r", "driver": driver, "pool": pool, "device": name}]}}})
            assert outside.allocation is not None
            state.add_allocation(outside.allocation)
            held.append(outside.allocation)
        claims = [_claim(rng, f"claim-{step}-{i}") for i in range(rng.choice([1, 1, 2]))]
        node_name = rng.choice([NODE_1, NODE_2])
        fast = Allocator(Features(), state, classes, skipping)
        fast.min_pools_to_skip = 1  # these nodes see a few pools: skip them all the same
        slow = Allocator(Features(), state, classes, SliceIndex(slices), skip_exhausted_pools=False)
        got, results = _outcome(fast, node_name, claims)
        want, _ = _outcome(slow, node_name, claims)
        assert got == want, f"seed {seed}, step {step}"
        for result in results:
            state.add_allocation(result)
            held.append(result)


def test_a_pool_found_exhausted_is_skipped_until_its_version_changes() -> None:
    def consuming(name: str) -> dict[str, Any]:
        return device(name, consumesCounters=[{"counterSet": "cs", "counters": {"c": {"value": "1"}}}])

    index = SliceIndex([
        resource_slice("full-devices", NODE_1, "a-full", DRIVER_A, consuming("device-1"), consuming("device-2"), count=2),
        resource_slice("full-counters", NODE_1, "a-full", DRIVER_A, count=2, sharedCounters=[{"name": "cs", "counters": {"c": {"value": "1"}}}]),
        resource_slice("free", NODE_1, "b-free", DRIVER_A, device("device-1")),
    ])
    lister = Lister([device_class(CLASS_A, DRIVER_A)])
    held = claim("held", {"name": "r", "exactly": {"deviceClassName": CLASS_A}},
                 status={"allocation": {"devices": {"results": [{"request": "r", "driver": DRIVER_A, "pool": "a-full", "device": "device-1"}]}}})
    assert held.allocation is not None
    state = AllocatedState()
    state.add_allocation(held.allocation)

    def pick(name: str) -> str:
        allocator = Allocator(Features(), state, lister, index)
        allocator.min_pools_to_skip = 1
        results = allocator.allocate(node(), [claim(name, {"name": "r", "exactly": {"deviceClassName": CLASS_A}})])
        assert results is not None
        return f"{results[0].devices[0].pool}/{results[0].devices[0].device}"

    assert pick("a") == "b-free/device-1"  # device-2 of a-full would need the counter device-1 holds
    (verdicts,) = index.verdicts.values()
    assert verdicts.marks[0] == state.pool_version(DRIVER_A, "a-full") * 2 + 1  # exhausted at this version
    state.remove_allocation(held.allocation)
    assert pick("b") == "a-full/device-1"
    assert verdicts.marks[0] == state.pool_version(DRIVER_A, "a-full") * 2  # judged again: not exhausted


def test_a_node_with_few_pools_keeps_no_verdicts() -> None:
    index = SliceIndex([resource_slice("s", NODE_1, "pool", DRIVER_A, device("device-1"))])
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), index)
    assert allocator.allocate(node(), [claim("c", {"name": "r", "exactly": {"deviceClassName": CLASS_A}})]) is not None
    assert not index.verdicts  # one pool: scanning it costs less than judging it
