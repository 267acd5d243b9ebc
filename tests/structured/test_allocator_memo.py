"""The allocator's memo and allocated state: outcomes reused only while nothing they depend on
changed."""

from __future__ import annotations

from fractions import Fraction

from kubesched.objects.dra import ResourceClaim
from kubesched.structured import (
    AllocatedState,
    Allocator,
    DeviceID,
    Features,
    SliceIndex,
)

from .allocator_cases import Lister, one_device
from .allocator_fixtures import (
    CLASS_A,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    POOL_1,
    claim,
    device,
    device_class,
    node,
    request,
    resource_slice,
)



def test_slice_index_reuses_pools_for_the_same_node() -> None:
    index = SliceIndex([one_device()])
    n = node()
    assert index.pools_for(n, Features()) is index.pools_for(n, Features())


def test_allocated_state_from_claims_skips_admin_access_and_tracks_shares() -> None:
    allocated = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "r", "driver": DRIVER_A, "pool": POOL_1, "device": "d0"},
                    {"request": "r", "driver": DRIVER_A, "pool": POOL_1, "device": "d1", "adminAccess": True},
                    {"request": "r", "driver": DRIVER_A, "pool": POOL_1, "device": "d2", "shareID": "s", "consumedCapacity": {"bw": "1"}},
                ]
            }
        }
    }
    state = AllocatedState.from_claims([claim("c", request("r", CLASS_A), status=allocated)])
    assert state.allocated_devices == {DeviceID(DRIVER_A, POOL_1, "d0")}
    assert state.aggregated_capacity == {DeviceID(DRIVER_A, POOL_1, "d2"): {"bw": Fraction(1)}}


def test_remembered_outcome_is_dropped_when_a_device_of_the_node_gets_allocated() -> None:
    index = SliceIndex([resource_slice("s", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))])
    lister = Lister([device_class(CLASS_A, DRIVER_A)])
    n = node()
    first = Allocator(Features(), AllocatedState(), lister, index).allocate(n, [claim("a", request("r", CLASS_A))])
    assert first is not None and first[0].devices[0].device == "device-1"
    taken = AllocatedState(allocated_devices={DeviceID(DRIVER_A, POOL_1, "device-1")})
    second = Allocator(Features(), taken, lister, index).allocate(n, [claim("b", request("r", CLASS_A))])
    assert second is not None and second[0].devices[0].device == "device-2"
    both = AllocatedState(allocated_devices={DeviceID(DRIVER_A, POOL_1, "device-1"), DeviceID(DRIVER_A, POOL_1, "device-2")})
    assert Allocator(Features(), both, lister, index).allocate(n, [claim("c", request("r", CLASS_A))]) is None


def test_remembered_outcome_serves_another_claim_with_the_same_spec() -> None:
    index = SliceIndex([resource_slice("s", NODE_1, POOL_1, DRIVER_A, device("device-1", allowMultipleAllocations=True))])
    lister = Lister([device_class(CLASS_A, DRIVER_A)])
    allocator = Allocator(Features(), AllocatedState(), lister, index)
    a = allocator.allocate(node(), [claim("a", request("r", CLASS_A))])
    b = allocator.allocate(node(), [claim("b", request("r", CLASS_A))])
    assert a is not None and b is not None
    assert a[0].devices[0].device == b[0].devices[0].device == "device-1"
    assert a[0].devices[0].share_id != b[0].devices[0].share_id  # results are built per claim


def test_allocated_state_versions_tell_diverging_copies_apart() -> None:
    def allocation(device_name: str) -> ResourceClaim:
        return claim(device_name, request("r", CLASS_A), status={"allocation": {"devices": {"results": [{"request": "r", "driver": DRIVER_A, "pool": POOL_1, "device": device_name}]}}})

    state = AllocatedState()
    before = state.pool_version(DRIVER_A, POOL_1)
    copy = state.copy()
    assert copy.pool_version(DRIVER_A, POOL_1) == before
    first, second = allocation("d1").allocation, allocation("d2").allocation
    assert first is not None and second is not None
    state.add_allocation(first)
    copy.add_allocation(second)
    assert len({before, state.pool_version(DRIVER_A, POOL_1), copy.pool_version(DRIVER_A, POOL_1)}) == 3
    assert state.pool_version(DRIVER_B, POOL_1) == before  # untouched pools keep the origin
    assert AllocatedState().pool_version(DRIVER_A, POOL_1) != before  # independent states never match


def test_nodes_that_see_the_same_pools_share_one_search() -> None:
    index = SliceIndex([resource_slice("s", None, POOL_1, DRIVER_A, device("device-1"), device("device-2"), allNodes=True)])
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), index)
    c = claim("c", request("r", CLASS_A))
    first = allocator.allocate(node(NODE_1), [c])
    searched = allocator.num_allocate_one_invocations
    second = allocator.allocate(node(NODE_2, "region-2"), [c])
    assert allocator.num_allocate_one_invocations == searched
    assert first is not None and second is not None
    assert first[0].devices[0].device == second[0].devices[0].device == "device-1"


def test_per_device_node_selection_keeps_searches_per_node() -> None:
    slices = [
        resource_slice("s", None, POOL_1, DRIVER_A, device("device-1", nodeName=NODE_1), device("device-2", nodeName=NODE_2), perDeviceNodeSelection=True)
    ]
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), SliceIndex(slices))
    c = claim("c", request("r", CLASS_A))
    on_1 = allocator.allocate(node(NODE_1), [c])
    on_2 = allocator.allocate(node(NODE_2), [c])
    assert on_1 is not None and on_2 is not None
    assert (on_1[0].devices[0].device, on_2[0].devices[0].device) == ("device-1", "device-2")


def test_counters_left_follow_the_allocated_state_across_allocators() -> None:
    def consuming(name: str) -> dict[str, object]:
        return device(name, consumesCounters=[{"counterSet": "cs", "counters": {"memory": {"value": "4Gi"}}}])

    index = SliceIndex(
        [
            resource_slice("devices", NODE_1, POOL_1, DRIVER_A, consuming("device-1"), consuming("device-2"), consuming("device-3"), count=2),
            resource_slice("counters", NODE_1, POOL_1, DRIVER_A, count=2, sharedCounters=[{"name": "cs", "counters": {"memory": {"value": "8Gi"}}}]),
        ]
    )
    lister = Lister([device_class(CLASS_A, DRIVER_A)])
    state = AllocatedState()

    def pick(name: str) -> str | None:
        results = Allocator(Features(), state, lister, index).allocate(node(), [claim(name, request("r", CLASS_A))])
        if results is None:
            return None
        allocation = results[0]
        state.add_allocation(allocation)
        return allocation.devices[0].device

    assert [pick("a"), pick("b"), pick("c")] == ["device-1", "device-2", None]  # 8Gi of counters: two devices


def test_per_device_node_selection_remembers_outcomes_per_node_labels() -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}
    slices = [resource_slice("s", None, POOL_1, DRIVER_A, device("device-1", nodeSelector=selector), device("device-2", allNodes=True), perDeviceNodeSelection=True)]
    index = SliceIndex(slices)
    lister = Lister([device_class(CLASS_A, DRIVER_A)])
    c = claim("c", request("r", CLASS_A))
    state = AllocatedState()

    def pick(region: str) -> str:
        results = Allocator(Features(), state, lister, index).allocate(node(NODE_1, region), [c])
        assert results is not None
        return results[0].devices[0].device

    assert pick("region-1") == "device-1"
    assert pick("region-2") == "device-2"  # the same node, relabelled


def test_nodes_with_the_same_node_key_get_the_same_devices() -> None:
    index = SliceIndex([resource_slice("s", None, POOL_1, DRIVER_A, device("device-1"), device("device-2"), allNodes=True)])
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), index)
    one, other = node(NODE_1), node(NODE_2, "region-2")
    assert allocator.node_key(one) == allocator.node_key(other)
    results = allocator.allocate(one, [claim("c", request("r", CLASS_A))])
    assert results is not None
    moved = results.on_node(other)
    assert [d.device for d in moved[0].devices] == [d.device for d in results[0].devices] == ["device-1"]


def test_node_local_pools_give_each_node_its_own_key() -> None:
    index = SliceIndex([resource_slice("s1", NODE_1, POOL_1, DRIVER_A, device("device-1")), resource_slice("s2", NODE_2, "pool-2", DRIVER_A, device("device-1"))])
    allocator = Allocator(Features(), AllocatedState(), Lister([device_class(CLASS_A, DRIVER_A)]), index)
    assert allocator.node_key(node(NODE_1)) != allocator.node_key(node(NODE_2))
