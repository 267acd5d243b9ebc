"""The scheduler cache: assumed pods and their confirmation, nodes coming and going with
their pods, the node table's columns, the snapshot order, and pod observers."""

from __future__ import annotations

import pytest

from kubesched.cache.cache import Cache, CacheError
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod

from ..helpers import container, make_node, make_pod, node, pod

GI = 1024**3


def cache_with(*nodes):
    cache = Cache()
    for n in nodes:
        cache.add_node(n if not isinstance(n, dict) else parse_node(n))
    return cache


def usage(cache, name):
    """What NodeInfo and the node table both say about a node, checked to agree."""
    info = cache.nodes[name]
    t, r = cache.table, info.row
    from_info = (len(info.pods), info.requested.milli_cpu, info.requested.memory,
                 info.non_zero_requested.milli_cpu, info.non_zero_requested.memory)
    from_table = (int(t.pod_count[r]), int(t.req_cpu[r]), int(t.req_mem[r]), int(t.nz_cpu[r]), int(t.nz_mem[r]))
    assert from_info == from_table
    return from_info


def bound(name, node_name, **kw):
    return make_pod(name, node_name=node_name, **kw)


# -- assume / finish binding / forget / confirm ---------------------------------------------------
def test_an_assumed_pod_counts_on_its_node_at_once():
    cache = cache_with(make_node("n1"))
    p = make_pod("p", cpu="1", memory="1Gi")
    cache.assume_pod(p.copy_with(node_name="n1"), "n1")
    assert cache.is_assumed(p)
    assert usage(cache, "n1") == (1, 1000, GI, 1000, GI)


def test_assuming_a_pod_twice_is_an_error():
    cache = cache_with(make_node("n1"))
    p = make_pod("p")
    cache.assume_pod(p, "n1")
    with pytest.raises(CacheError):
        cache.assume_pod(p, "n1")


def test_forgetting_an_assumed_pod_frees_the_node():
    cache = cache_with(make_node("n1"))
    p = make_pod("p", cpu="1")
    cache.assume_pod(p, "n1")
    cache.forget_pod(p)
    assert not cache.is_assumed(p)
    assert usage(cache, "n1") == (0, 0, 0, 0, 0)
    assert cache.pod_count == 0


def test_a_bound_pod_cannot_be_forgotten():
    cache = cache_with(make_node("n1"))
    p = bound("p", "n1")
    cache.add_pod(p)
    with pytest.raises(CacheError):
        cache.forget_pod(p)


def test_the_informers_add_confirms_an_assumed_pod():
    cache = cache_with(make_node("n1"))
    p = make_pod("p", cpu="1")
    cache.assume_pod(p, "n1")
    cache.finish_binding(p, now=0.0)
    confirmed = parse_pod(pod("p", cpu="1", node_name="n1", uid=p.uid))
    cache.add_pod(confirmed)
    assert not cache.is_assumed(confirmed)
    assert cache.get_pod(p.uid).node_name == "n1"
    assert usage(cache, "n1") == (1, 1000, 0, 1000, 200 * 1024**2)


def test_a_pod_bound_elsewhere_than_assumed_moves_to_its_real_node():
    cache = cache_with(make_node("n1"), make_node("n2"))
    p = make_pod("p", cpu="1")
    cache.assume_pod(p, "n1")
    cache.add_pod(parse_pod(pod("p", cpu="1", node_name="n2", uid=p.uid)))
    assert usage(cache, "n1")[0] == 0
    assert usage(cache, "n2")[:2] == (1, 1000)


def test_assumed_pods_do_not_expire_by_default():
    cache = cache_with(make_node("n1"))
    p = make_pod("p")
    cache.assume_pod(p, "n1")
    cache.finish_binding(p, now=0.0)
    assert cache.cleanup_assumed_pods(now=10**9) == []
    assert cache.is_assumed(p)


def test_with_a_ttl_assumed_pods_expire_only_after_binding_finished():
    cache = Cache(assumed_pod_ttl=30.0)
    cache.add_node(make_node("n1"))
    a, b = make_pod("a", cpu="1"), make_pod("b", cpu="1")
    cache.assume_pod(a, "n1")
    cache.assume_pod(b, "n1")
    cache.finish_binding(a, now=100.0)
    assert cache.cleanup_assumed_pods(now=129.0) == []
    assert cache.cleanup_assumed_pods(now=130.0) == [a]
    assert not cache.is_assumed(a) and cache.is_assumed(b)  # b's binding is still in flight
    assert usage(cache, "n1")[:2] == (1, 1000)


# -- bound pods ----------------------------------------------------------------------------------------
def test_adding_updating_and_removing_bound_pods():
    cache = cache_with(make_node("n1"))
    old = bound("p", "n1", cpu="1", labels={"v": "1"})
    cache.add_pod(old)
    new = parse_pod(pod("p", cpu="2", node_name="n1", uid=old.uid, labels={"v": "2"}))
    cache.update_pod(new)
    assert usage(cache, "n1")[:2] == (1, 2000)
    assert cache.nodes["n1"].pods[old.uid].labels == {"v": "2"}
    cache.remove_pod(new)
    assert usage(cache, "n1") == (0, 0, 0, 0, 0)


def test_non_zero_requests_sum_the_scoring_defaults():
    cache = cache_with(make_node("n1"))
    cache.add_pod(bound("a", "n1"))
    cache.add_pod(bound("b", "n1", cpu="1"))
    assert usage(cache, "n1") == (2, 1000, 0, 1100, 400 * 1024**2)


def test_extended_resources_and_host_ports_are_accounted():
    cache = cache_with(make_node("n1", extended={"nvidia.com/gpu": 4}))
    p = bound("p", "n1", containers=[container(requests={"nvidia.com/gpu": "3"}, ports=[{"containerPort": 80, "hostPort": 80}])])
    cache.add_pod(p)
    info, table = cache.nodes["n1"], cache.table
    assert info.requested.scalar == {"nvidia.com/gpu": 3}
    alloc, req = table.scalar_columns("nvidia.com/gpu")
    assert (int(alloc[info.row]), int(req[info.row])) == (4, 3)
    assert info.used_ports.conflicts(p.host_ports[0])
    assert table.ports[("TCP", 80)] == {info.row: {"0.0.0.0": 1}}
    cache.remove_pod(p)
    assert not info.used_ports.conflicts(p.host_ports[0]) and ("TCP", 80) not in table.ports
    assert int(req[info.row]) == 0


# -- nodes -------------------------------------------------------------------------------------------------
def test_a_pod_bound_to_a_node_not_yet_seen_counts_once_the_node_arrives():
    cache = Cache()
    cache.add_pod(bound("p", "late", cpu="1"))
    assert "late" not in cache.nodes
    cache.add_node(make_node("late"))
    assert usage(cache, "late")[:2] == (1, 1000)


def test_a_removed_node_leaves_the_snapshot_and_its_pods_come_back_with_it():
    cache = cache_with(make_node("n1"), make_node("n2"))
    cache.add_pod(bound("p", "n1", cpu="1"))
    cache.remove_node("n1")
    assert cache.node_names() == ["n2"]
    assert cache.snapshot().num_nodes == 1 and cache.snapshot().get("n1") is None
    cache.add_node(make_node("n1"))
    assert usage(cache, "n1")[:2] == (1, 1000)


def test_a_removed_nodes_row_is_reused_clean():
    cache = cache_with(make_node("n1", cpu="8"))
    cache.add_pod(bound("p", "n1", cpu="1"))
    row = cache.nodes["n1"].row
    cache.remove_node("n1")
    cache.add_node(make_node("n2", cpu="2"))
    assert cache.nodes["n2"].row == row
    assert usage(cache, "n2") == (0, 0, 0, 0, 0)
    assert int(cache.table.alloc_cpu[row]) == 2000
    assert cache.table.names[row] == "n2"


def test_a_node_update_refreshes_its_columns_and_keeps_its_pods():
    cache = cache_with(make_node("n1", cpu="4", labels={"disk": "hdd"}))
    cache.add_pod(bound("p", "n1", cpu="1"))
    ids, vocab = cache.table.label_column("disk")
    assert vocab == {"hdd": 0}
    cache.update_node(make_node("n1", cpu="8", labels={"disk": "ssd"}, unschedulable=True))
    row = cache.nodes["n1"].row
    assert int(cache.table.alloc_cpu[row]) == 8000 and bool(cache.table.unschedulable[row])
    ids, vocab = cache.table.label_column("disk")
    assert ids[row] == vocab["ssd"]
    assert usage(cache, "n1")[:2] == (1, 1000)


def test_adding_a_known_node_updates_it():
    cache = cache_with(make_node("n1", cpu="4"))
    cache.add_node(make_node("n1", cpu="6"))
    assert cache.node_names() == ["n1"]
    assert cache.nodes["n1"].allocatable.milli_cpu == 6000


def test_node_images_are_indexed_by_every_name():
    cache = cache_with(
        make_node("n1", images=[(["repo/a:1", "repo/a@sha256:x"], 100)]),
        make_node("n2", images=[(["repo/a:1"], 100)]),
    )
    rows, sizes = cache.table.image_rows("repo/a:1")
    assert sorted(cache.table.names[r] for r in rows.tolist()) == ["n1", "n2"]
    assert sizes.tolist() == [100, 100]
    rows, _ = cache.table.image_rows("repo/a@sha256:x")
    assert [cache.table.names[r] for r in rows.tolist()] == ["n1"]


# -- snapshot order --------------------------------------------------------------------------------------------
def test_snapshot_order_interleaves_zones_round_robin():
    cache = cache_with(*[make_node(n, zone=z) for n, z in
                         [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c"), ("b2", "b"), ("a3", "a")]])
    assert cache.node_names() == ["a1", "b1", "c1", "a2", "b2", "a3"]
    assert [i.name for i in cache.snapshot().list()] == cache.node_names()


def test_the_snapshot_node_tuple_is_its_list_kept_as_one_object_until_a_node_changes():
    """A pod-group cycle's parent placement: the same tuple cycle after cycle (placement
    generators recognise it), a new one once a node comes, goes or changes what it says."""
    cache = cache_with(make_node("a1", zone="a"), make_node("b1", zone="b"), make_node("a2", zone="a"))
    snapshot = cache.snapshot()
    first = snapshot.node_tuple()
    assert list(first) == snapshot.list() and snapshot.node_tuple() is first
    cache.add_pod(make_pod("p", node_name="a1"))
    cache.update_node(make_node("a1", zone="a"))  # nothing the scheduler reads changed
    assert snapshot.node_tuple() is first
    cache.update_node(make_node("a1", zone="a", labels={"rack": "r1"}))
    relabelled = snapshot.node_tuple()
    assert relabelled is not first and list(relabelled) == snapshot.list()
    cache.remove_node("b1")
    cache.add_node(make_node("c1", zone="c"))
    assert [i.name for i in snapshot.node_tuple()] == cache.node_names() == ["a1", "c1", "a2"]


def test_nodes_without_a_zone_form_their_own_group():
    cache = cache_with(make_node("x1"), make_node("a1", zone="a"), make_node("x2"), make_node("a2", zone="a"))
    assert cache.node_names() == ["x1", "a1", "x2", "a2"]


def test_zones_of_different_regions_are_different():
    def n(name, region, zone):
        return make_node(name, labels={"topology.kubernetes.io/region": region, "topology.kubernetes.io/zone": zone})

    cache = cache_with(n("r1a-1", "r1", "a"), n("r1a-2", "r1", "a"), n("r2a-1", "r2", "a"))
    assert cache.node_names() == ["r1a-1", "r2a-1", "r1a-2"]


def test_the_legacy_zone_label_counts():
    cache = cache_with(
        make_node("a1", labels={"failure-domain.beta.kubernetes.io/zone": "a"}),
        make_node("a2", labels={"failure-domain.beta.kubernetes.io/zone": "a"}),
        make_node("b1", zone="b"),
    )
    assert cache.node_names() == ["a1", "b1", "a2"]


def test_removing_nodes_keeps_the_order_of_the_rest():
    cache = cache_with(*[make_node(n, zone=z) for n, z in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("b2", "b"), ("c1", "c")]])
    cache.remove_node("b1")
    assert cache.node_names() == ["a1", "b2", "c1", "a2"]
    cache.remove_node("b2")  # zone b is gone; when it comes back it joins last
    cache.add_node(make_node("b3", zone="b"))
    assert cache.node_names() == ["a1", "c1", "b3", "a2"]


def test_the_beta_zone_label_wins_over_the_ga_one():
    # GetZoneKey reads failure-domain.beta.kubernetes.io/zone first: "x" nodes are one zone here
    def n(name, beta, ga):
        return make_node(name, labels={"failure-domain.beta.kubernetes.io/zone": beta, "topology.kubernetes.io/zone": ga})
    cache = cache_with(n("x1", "x", "a"), n("x2", "x", "b"), make_node("b1", zone="b"), n("x3", "x", "a"))
    assert cache.node_names() == ["x1", "b1", "x2", "x3"]


def test_the_beta_region_label_wins_over_the_ga_one():
    def n(name, beta, ga):
        return make_node(name, labels={"failure-domain.beta.kubernetes.io/region": beta, "topology.kubernetes.io/region": ga})
    cache = cache_with(n("r1", "r", "s"), n("r2", "r", "t"), n("s1", "s", "s"))
    assert cache.node_names() == ["r1", "s1", "r2"]


def test_a_node_changing_zone_moves_to_the_end_of_its_new_zone():
    cache = cache_with(*[make_node(n, zone=z) for n, z in [("a1", "a"), ("a2", "a"), ("b1", "b")]])
    cache.update_node(make_node("a1", zone="b"))
    assert cache.node_names() == ["a2", "b1", "a1"]


# -- observers ------------------------------------------------------------------------------------------------
class Recorder:
    def __init__(self):
        self.events = []

    def pod_added(self, pod, node):
        self.events.append(("added", pod.name, node.name))

    def pod_removed(self, pod, node):
        self.events.append(("removed", pod.name, node.name))

    def nodes_changed(self):
        self.events.append(("nodes",))


def test_a_new_observer_is_told_of_the_pods_already_placed():
    cache = cache_with(make_node("n1"))
    cache.add_pod(bound("p", "n1"))
    rec = Recorder()
    cache.add_observer(rec)
    assert rec.events == [("added", "p", "n1")]


def test_observers_follow_every_placement_change():
    cache = cache_with(make_node("n1"), make_node("n2"))
    rec = Recorder()
    cache.add_observer(rec)
    a = make_pod("a")
    cache.assume_pod(a, "n1")
    cache.forget_pod(a)
    b = bound("b", "n2")
    cache.add_pod(b)
    cache.update_pod(parse_pod(pod("b", node_name="n2", uid=b.uid, labels={"x": "y"})))
    cache.remove_pod(b)
    cache.add_node(make_node("n3"))
    assert rec.events == [
        ("added", "a", "n1"), ("removed", "a", "n1"),
        ("added", "b", "n2"), ("removed", "b", "n2"), ("added", "b", "n2"), ("removed", "b", "n2"),
        ("nodes",),
    ]


def test_removing_a_node_reports_its_pods_removed():
    cache = cache_with(make_node("n1"))
    cache.add_pod(bound("p", "n1"))
    rec = Recorder()
    cache.add_observer(rec)
    rec.events.clear()
    cache.remove_node("n1")
    assert rec.events == [("removed", "p", "n1"), ("nodes",)]


def test_unseen_namespaces_have_only_their_name_label():
    cache = Cache()
    cache.set_namespace("team", {"kubernetes.io/metadata.name": "team", "tier": "gold"})
    assert cache.namespace_labels("team")["tier"] == "gold"
    assert cache.namespace_labels("other") == {"kubernetes.io/metadata.name": "other"}
