"""The structured allocator decides as upstream's allocator does: the table of upstream's
allocator_testing.go cases (allocator_cases.py), plus the behaviour around it."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.structured import (
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    Allocator,
    DeviceID,
    Features,
    NodeAllocationError,
)

from .allocator_cases import CASES, Case, Lister, Pick, one_device
from .allocator_fixtures import (
    CLASS_A,
    DRIVER_A,
    INT_ATTRIBUTE,
    NODE_1,
    POOL_1,
    claim,
    device,
    device_class,
    node,
    request,
    resource_slice,
)


def _run(case: Case) -> list[list[Pick]] | None:
    state = case.state if case.state is not None else AllocatedState(allocated_devices=set(case.allocated))
    allocator = Allocator(case.features, state, Lister(case.classes), case.slices)
    try:
        results = allocator.allocate(case.node, case.claims)
    finally:
        if case.expect_invocations is not None:
            # upstream's expectNumAllocateOneInvocations: the search visits what upstream's does
            assert allocator.num_allocate_one_invocations == case.expect_invocations
    if results is None:
        return None
    return [[(d.request, d.driver, d.pool, d.device) for d in r.devices] for r in results]


@pytest.mark.parametrize("name", sorted(CASES))
def test_allocator(name: str) -> None:
    case = CASES[name]
    if isinstance(case.expect, str):
        with pytest.raises(AllocationError, match=case.expect.replace("(", r"\(")):
            _run(case)
        return
    assert _run(case) == case.expect


def test_search_visits_combinations_in_upstream_order() -> None:
    case = CASES["check-combinations-with-backtracking"]
    allocator = Allocator(Features(), AllocatedState(), Lister(case.classes), case.slices)
    allocator.allocate(case.node, case.claims)
    assert allocator.num_allocate_one_invocations == case.expect_invocations


def test_invalid_pool_error_is_only_for_the_node() -> None:
    with pytest.raises(NodeAllocationError):
        _run(CASES["duplicate-slice"])


def test_local_device_pins_the_claim_to_the_node() -> None:
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [one_device()])
    results = allocator.allocate(node(), [claim("claim-0", request("req-0", CLASS_A))])
    assert results is not None and results[0].node_selector is not None
    assert results[0].node_selector.raw == {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE_1]}]}]}


def test_network_attached_device_carries_the_pool_selector() -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [resource_slice("s", None, POOL_1, DRIVER_A, device("device-1"), nodeSelector=selector)])
    results = allocator.allocate(node(), [claim("claim-0", request("req-0", CLASS_A))])
    assert results is not None and results[0].node_selector is not None and results[0].node_selector.raw == selector


def test_all_nodes_device_has_no_node_selector() -> None:
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [resource_slice("s", None, POOL_1, DRIVER_A, device("device-1"), allNodes=True)])
    results = allocator.allocate(node(), [claim("claim-0", request("req-0", CLASS_A))])
    assert results is not None and results[0].node_selector is None


def test_distinct_attribute_compares_only_with_the_last_device_of_the_same_request() -> None:
    # Upstream remembers one value per request name, so a count-3 request can get 0, 1, 0.
    slice_ = resource_slice("s", NODE_1, POOL_1, DRIVER_A, *(device(f"d{i}", None, {"numa": {"int": v}}) for i, v in enumerate([0, 1, 0])))
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [slice_])
    results = allocator.allocate(node(), [claim("c", request("r", CLASS_A, 3), constraints=[{"distinctAttribute": INT_ATTRIBUTE}])])
    assert results is not None and [d.device for d in results[0].devices] == ["d0", "d1", "d2"]


def _shared(capacity: dict[str, object], requests: list[str], allocated: dict[str, str] | None = None) -> list[list[str]] | None:
    slice_ = resource_slice("s", NODE_1, POOL_1, DRIVER_A, device("device-1", {"bw": capacity}, allowMultipleAllocations=True))
    state = AllocatedState()
    if allocated:
        state.aggregated_capacity[DeviceID(DRIVER_A, POOL_1, "device-1")] = {k: Fraction(int(v)) for k, v in allocated.items()}
    allocator = Allocator(Features(), state, Lister([device_class(CLASS_A, DRIVER_A)]), [slice_])
    claims = [claim(f"c{i}", request("r", CLASS_A, 1, capacity={"requests": {"bw": r}})) for i, r in enumerate(requests)]
    results = allocator.allocate(node(), claims)
    if results is None:
        return None
    out = []
    for result in results:
        consumed = result.devices[0].consumed_capacity
        assert consumed is not None and result.devices[0].share_id is not None
        out.append([consumed["bw"].text])
    return out


RANGE = {"value": "4", "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}


@pytest.mark.parametrize(
    ("case", "capacity", "requests", "allocated", "expect"),
    [
        ("range-policy-rounds-up-to-min", RANGE, ["1", "1"], None, [["2"], ["2"]]),
        ("range-policy-rounds-up-by-step", RANGE, ["3"], None, [["4"]]),
        ("range-policy-over-max", RANGE, ["5"], None, None),
        ("valid-values-round-up", {"value": "3", "requestPolicy": {"default": "1", "validValues": ["1", "3"]}}, ["2"], None, [["3"]]),
        ("no-policy-exceeds-capacity", {"value": "4"}, ["3", "2"], None, None),
        ("allocated-capacity-leaves-the-rest", {"value": "4"}, ["1"], {"bw": "3"}, [["1"]]),
        ("allocated-capacity-leaves-too-little", {"value": "4"}, ["2"], {"bw": "3"}, None),
        ("step-stored-as-binary-si", {"value": "100G", "requestPolicy": {"validRange": {"min": "1Ki", "step": "1Ki"}}}, ["60G"], None, [["58593750Ki"]]),
        ("step-rounds-up-in-whole-steps", {"value": "100G", "requestPolicy": {"validRange": {"min": "1Mi", "step": "1Mi"}}}, ["60G"], None, [["57221Mi"]]),
    ],
)
def test_consumable_capacity(case: str, capacity: dict[str, object], requests: list[str], allocated: dict[str, str] | None, expect: list[list[str]] | None) -> None:
    assert _shared(capacity, requests, allocated) == expect


def test_capacity_request_for_a_capacity_the_device_lacks_skips_the_device() -> None:
    slice_ = resource_slice("s", NODE_1, POOL_1, DRIVER_A, device("device-1", {"bw": "4"}))
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [slice_])
    assert allocator.allocate(node(), [claim("c", request("r", CLASS_A, 1, capacity={"requests": {"memory": "1"}}))]) is None


def test_binding_conditions_are_copied_into_the_result() -> None:
    slice_ = resource_slice(
        "s", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2", bindingConditions=["IsPrepare"], bindingFailureConditions=["BindingFailed"])
    )
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [slice_])
    results = allocator.allocate(node(), [claim("c", request("req-0", CLASS_A), request("req-1", CLASS_A))])
    assert results is not None
    first, second = results[0].devices
    assert (first.device, first.binding_conditions) == ("device-1", None)
    assert (second.device, second.binding_conditions, second.binding_failure_conditions) == ("device-2", ("IsPrepare",), ("BindingFailed",))


def test_pools_with_binding_conditions_are_tried_last() -> None:
    slices = [
        resource_slice("s1", NODE_1, "a-pool", DRIVER_A, device("device-1", bindingConditions=["Ready"], bindingFailureConditions=["Failed"])),
        resource_slice("s2", NODE_1, "b-pool", DRIVER_A, device("device-1")),
    ]
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), slices)
    results = allocator.allocate(node(), [claim("c", request("r", CLASS_A))])
    assert results is not None and results[0].devices[0].pool == "b-pool"


def test_search_past_its_deadline_is_a_timeout() -> None:
    # 12 devices, 6 for one request and then one that no device satisfies: every combination is tried.
    slice_ = resource_slice("s", NODE_1, POOL_1, DRIVER_A, *(device(f"d{i}", None, {"numa": {"int": i}}) for i in range(12)))
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), [slice_])
    never = f'device.attributes["{DRIVER_A}"].numa > 100'
    with pytest.raises(AllocationTimeout):
        allocator.allocate(node(), [claim("c", request("r", CLASS_A, 6), request("s", CLASS_A, 1, never))], deadline=0.0)