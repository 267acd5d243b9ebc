"""Which pools a node sees (upstream GatherPools): generations, completeness, node selection,
order."""

from __future__ import annotations

from kubesched.objects.dra import ResourceSlice
from kubesched.structured import Features, SliceIndex

from .allocator_fixtures import DRIVER_A, DRIVER_B, NODE_1, NODE_2, POOL_1, POOL_2, counter_slice, device, node, resource_slice


def _pools(*slices: ResourceSlice, node_name: str = NODE_1) -> list[tuple[str, str, bool, bool, list[str]]]:
    pools = SliceIndex(list(slices)).pools_for(node(node_name), Features())
    return [(p.driver, p.pool, p.is_incomplete, p.is_invalid, [s.name for s in p.slices_targeting_node]) for p in pools]


def test_pools_are_sorted_by_driver_then_name_and_slices_by_name() -> None:
    assert _pools(
        resource_slice("b", NODE_1, POOL_2, DRIVER_A, device("d")),
        resource_slice("z", NODE_1, POOL_1, DRIVER_B, device("d")),
        resource_slice("c", NODE_1, POOL_1, DRIVER_A, device("d1"), count=2),
        resource_slice("a", NODE_1, POOL_1, DRIVER_A, device("d2"), count=2),
    ) == [
        (DRIVER_A, POOL_1, False, False, ["a", "c"]),
        (DRIVER_A, POOL_2, False, False, ["b"]),
        (DRIVER_B, POOL_1, False, False, ["z"]),
    ]


def test_only_the_newest_generation_counts() -> None:
    assert _pools(
        resource_slice("old", NODE_1, POOL_1, DRIVER_A, device("d"), generation=1),
        resource_slice("new", NODE_1, POOL_1, DRIVER_A, device("d"), generation=2),
    ) == [(DRIVER_A, POOL_1, False, False, ["new"])]


def test_pool_short_of_slices_is_incomplete() -> None:
    assert _pools(resource_slice("s", NODE_1, POOL_1, DRIVER_A, device("d"), count=2)) == [(DRIVER_A, POOL_1, True, False, [])]


def test_pool_completed_by_slices_for_other_nodes_is_complete() -> None:
    assert _pools(
        resource_slice("s1", NODE_1, POOL_1, DRIVER_A, device("d1"), count=2),
        resource_slice("s2", NODE_2, POOL_1, DRIVER_A, device("d2"), count=2),
    ) == [(DRIVER_A, POOL_1, False, False, ["s1"])]


def test_pool_with_a_newer_generation_elsewhere_is_ignored() -> None:
    assert _pools(
        resource_slice("s1", NODE_1, POOL_1, DRIVER_A, device("d1"), count=2, generation=1),
        resource_slice("s2", NODE_2, POOL_1, DRIVER_A, device("d2"), count=2, generation=2),
    ) == []


def test_duplicate_device_names_make_the_pool_invalid() -> None:
    assert _pools(
        resource_slice("s1", NODE_1, POOL_1, DRIVER_A, device("d"), count=2),
        resource_slice("s2", NODE_1, POOL_1, DRIVER_A, device("d"), count=2),
    ) == [(DRIVER_A, POOL_1, False, True, [])]


def test_node_selector_and_all_nodes_slices() -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}
    slices = [
        resource_slice("sel", None, POOL_1, DRIVER_A, device("d"), nodeSelector=selector),
        resource_slice("all", None, POOL_2, DRIVER_A, device("d"), allNodes=True),
    ]
    assert [p.pool for p in SliceIndex(slices).pools_for(node(NODE_1, "region-1"), Features())] == [POOL_1, POOL_2]
    assert [p.pool for p in SliceIndex(slices).pools_for(node(NODE_1, "region-2"), Features())] == [POOL_2]


def test_slice_with_shared_counters_belongs_to_its_pool_on_every_node() -> None:
    slices = [
        resource_slice("devices", NODE_1, POOL_1, DRIVER_A, device("d", consumesCounters=[{"counterSet": "cs", "counters": {"c": {"value": "1"}}}]), count=2),
        counter_slice("counters", NODE_1, POOL_1, DRIVER_A, {"cs": {"c": "1"}}),
    ]
    pools = SliceIndex(slices).pools_for(node(NODE_1), Features())
    assert [(p.pool, sorted(p.counter_sets), [s.name for s in p.slices_targeting_node]) for p in pools] == [(POOL_1, ["cs"], ["devices"])]
    other = SliceIndex(slices).pools_for(node(NODE_2), Features())
    assert [(p.pool, p.is_incomplete) for p in other] == [(POOL_1, False)]


def test_pools_with_binding_conditions_come_last() -> None:
    pools = _pools(
        resource_slice("a", NODE_1, "a-pool", DRIVER_A, device("d", bindingConditions=["Ready"], bindingFailureConditions=["Failed"])),
        resource_slice("b", NODE_1, "b-pool", DRIVER_A, device("d")),
    )
    assert [p[1] for p in pools] == ["b-pool", "a-pool"]
