"""Node updates are incremental in the node table: one that changes nothing the scheduler
reads costs nothing, and any other leaves the table as building it from scratch would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cache.cache import Cache
from kubesched.cache.node_table import NodeTable
from kubesched.objects.node import Node, parse_node
from kubesched.objects.selectors import Requirement

ZONES = ("a", "b", "c")
KEYS = ("tier", "disk")


def _node(name: str, zone: str | None, labels: dict[str, str], taints: list[str], cpu: int,
          images: list[str], heartbeat: int = 0) -> Node:
    all_labels = dict(labels)
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    return parse_node({
        "metadata": {"name": name, "labels": all_labels},
        "spec": {"taints": [{"key": t, "effect": "NoSchedule"} for t in taints]},
        "status": {"allocatable": {"cpu": str(cpu), "memory": "1Gi", "pods": "10"},
                   "images": [{"names": [i], "sizeBytes": 100} for i in images],
                   "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": str(heartbeat)}]},
    })


node_versions = st.builds(
    lambda zone, labels, taints, cpu, images: (zone, labels, taints, cpu, images),
    st.sampled_from((None,) + ZONES),
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(("x", "y")), max_size=2),
    st.lists(st.sampled_from(("t1", "t2")), max_size=2, unique=True),
    st.integers(1, 4),
    st.lists(st.sampled_from(("img1", "img2")), max_size=2, unique=True),
)


def _view(table: NodeTable) -> dict[str, object]:
    """What plugins read of a table, independent of row numbering and value ids."""
    live = [r for r in range(table.size) if table.alive[r]]
    ids = {key: table.label_column(key) for key in KEYS}
    labels = {
        table.names[r]: {k: next((v for v, i in ids[k][1].items() if i == ids[k][0][r]), None) for k in KEYS}
        for r in live
    }
    set_ids, sets = table.taint_sets()
    req = Requirement("tier", "In", ("x",))
    return {
        "order": [table.names[r] for r in table.order.tolist()],
        "labels": labels,
        "tier in x": sorted(table.names[r] for r in live if table.requirement_mask(req)[r]),
        "taints": {table.names[r]: sets[set_ids[r]] for r in live},
        "images": {i: sorted(table.names[r] for r in table.image_rows(i)[0].tolist()) for i in ("img1", "img2")},
        "cpu": {table.names[r]: int(table.alloc_cpu[r]) for r in live},
    }


@settings(max_examples=60, deadline=None)
@given(st.lists(node_versions, min_size=1, max_size=6), st.lists(st.tuples(st.integers(0, 5), node_versions), max_size=12))
def test_updates_leave_the_table_as_a_fresh_build(initial, updates):
    cache = Cache()
    current = {}
    for i, version in enumerate(initial):
        current[f"n{i}"] = version
        cache.add_node(_node(f"n{i}", *version))
    _view(cache.table)  # build the derived columns, so the updates must keep them right
    for index, version in updates:
        name = f"n{index % len(initial)}"
        current[name] = version
        cache.update_node(_node(name, *version))
        _view(cache.table)
    fresh = Cache()
    for name, version in current.items():
        fresh.add_node(_node(name, *version))
    got, want = _view(cache.table), _view(fresh.table)
    # The zone round-robin order depends on arrival order within a zone; compare per zone.
    assert sorted(got.pop("order")) == sorted(want.pop("order"))
    assert got == want


def test_an_update_that_changes_nothing_the_scheduler_reads_touches_nothing():
    cache = Cache()
    cache.add_node(_node("n1", "a", {"tier": "x"}, [], 2, ["img1"], heartbeat=1))
    table = cache.table
    table.label_column("tier")
    generation, order = table.node_generation, table.order
    changed = table.update_node(0, _node("n1", "a", {"tier": "x"}, [], 2, ["img1"], heartbeat=2))
    assert not changed
    assert table.node_generation == generation
    assert table.order is order
    assert ("label", "tier") in table._derived


def test_an_annotation_change_is_a_node_change_that_keeps_the_label_columns():
    cache = Cache()
    cache.add_node(_node("n1", "a", {"tier": "x"}, [], 2, ["img1"]))
    table = cache.table
    table.label_column("tier")
    generation = table.node_generation
    annotated = _node("n1", "a", {"tier": "x"}, [], 2, ["img1"])
    annotated.annotations = {"acme.io/window": "open"}
    assert table.update_node(0, annotated)
    assert table.node_generation == generation + 1  # plugins' node_derived caches start afresh
    assert table.nodes[0] is annotated
    assert ("label", "tier") in table._derived


def test_a_taint_change_keeps_the_label_columns():
    cache = Cache()
    cache.add_node(_node("n1", "a", {"tier": "x"}, [], 2, []))
    table = cache.table
    column = table.label_column("tier")
    cache.update_node(_node("n1", "a", {"tier": "x"}, ["t1"], 2, []))
    assert table.label_column("tier") is column
    assert table.taint_sets()[1][table.taint_sets()[0][0]][0].key == "t1"


def test_a_zone_change_moves_the_node_to_its_new_zone_in_the_order():
    cache = Cache()
    for i, zone in enumerate(("a", "a", "b")):
        cache.add_node(_node(f"n{i}", zone, {}, [], 2, []))
    assert [cache.table.names[r] for r in cache.table.order] == ["n0", "n2", "n1"]
    cache.update_node(_node("n0", "b", {}, [], 2, []))
    assert [cache.table.names[r] for r in cache.table.order] == ["n1", "n2", "n0"]


def _round_robin(table: NodeTable) -> list[int]:
    """The definition of the zone order: the i-th row of every zone, zone by zone."""
    zones = list(table._zones.values())
    out = []
    for i in range(max((len(z) for z in zones), default=0)):
        out.extend(rows[i] for rows in zones if i < len(rows))
    return out


operations = st.lists(
    st.tuples(st.sampled_from(("add", "update", "remove")), st.integers(0, 7), node_versions), max_size=16,
)


@settings(max_examples=80, deadline=None)
@given(st.lists(node_versions, min_size=1, max_size=6), operations)
def test_adds_removals_and_updates_leave_the_table_as_a_fresh_build(initial, ops):
    cache = Cache()
    current = {}
    for i, version in enumerate(initial):
        current[f"n{i}"] = version
        cache.add_node(_node(f"n{i}", *version))
    _view(cache.table)  # build the derived columns, so every change must keep them right
    for op, index, version in ops:
        name = f"n{index}"
        if op == "remove":
            current.pop(name, None)
            cache.remove_node(name)
        else:
            current[name] = version
            cache.add_node(_node(name, *version)) if op == "add" else cache.update_node(_node(name, *version))
        assert cache.table.order.tolist() == _round_robin(cache.table)
        _view(cache.table)
    fresh = Cache()
    for name, version in current.items():
        fresh.add_node(_node(name, *version))
    got, want = _view(cache.table), _view(fresh.table)
    assert sorted(got.pop("order")) == sorted(want.pop("order"))
    assert got == want


def test_adding_a_node_patches_the_derived_columns_instead_of_rebuilding_them():
    cache = Cache()
    for i in range(3):
        cache.add_node(_node(f"n{i}", "a", {"tier": "x"}, [], 2, ["img1"]))
    table = cache.table
    _view(table)
    cache.add_node(_node("n3", "a", {"tier": "y"}, ["t1"], 2, ["img2"]))
    assert ("label", "tier") in table._derived and "taints" in table._derived and "images" in table._derived
    assert table.order.tolist() == [0, 1, 2, 3]
    ids, vocab = table.label_column("tier")
    assert ids[3] == vocab["y"]
    assert table.image_rows("img2")[0].tolist() == [3]


def test_removing_a_node_clears_its_row_everywhere():
    cache = Cache()
    for i in range(3):
        cache.add_node(_node(f"n{i}", "a", {"tier": "x"}, ["t1"], 2, ["img1"]))
    table = cache.table
    _view(table)
    cache.remove_node("n1")
    ids, vocab = table.label_column("tier")
    set_ids, sets = table.taint_sets()
    assert table.order.tolist() == [0, 2]
    assert ids[1] == -1 and sets[set_ids[1]] == ()
    assert table.image_rows("img1")[0].tolist() == [0, 2]
    assert "n1" not in table.name_rows()
