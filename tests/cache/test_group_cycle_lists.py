"""What a pod-group cycle's snapshot lists leave out (upstream's ``Snapshot.AssumePod`` adds a
member to its node but refreshes neither ``HavePodsWithAffinityList``, nor
``HavePodsWithRequiredAntiAffinityList``, nor ``usedPVCSet``): the cache's journal of one cycle."""

from __future__ import annotations

from typing import Any

from kubesched.cache.cache import Cache
from kubesched.objects.pod import PodInfo, parse_pod

from ..helpers import make_node, pod

HOSTNAME = "kubernetes.io/hostname"
ANTI = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": HOSTNAME}]}}
PREFERRED = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": HOSTNAME}}]}}


def a_pod(name: str, node_name: str = "", affinity: dict[str, Any] | None = None, claim: str = "") -> PodInfo:
    raw = pod(name, uid=name, cpu="100m", node_name=node_name or None, affinity=affinity)
    if claim:
        raw["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return parse_pod(raw)


def cluster(*bound: PodInfo) -> Cache:
    cache = Cache()
    for name in ("n1", "n2"):
        cache.add_node(make_node(name))
    for p in bound:
        cache.add_pod(p)
    return cache


def names(pairs: list[tuple[PodInfo, Any]]) -> list[tuple[str, str]]:
    return [(p.name, info.name) for p, info in pairs]


def test_outside_a_pod_group_cycle_the_snapshot_has_no_lists_to_correct() -> None:
    cache = cluster()
    cache.assume_pod(a_pod("a", affinity=ANTI), "n1")
    assert cache.snapshot().pod_group_cycle_lists() is None


def test_a_member_assumed_on_a_node_not_listed_is_left_out_of_both_lists() -> None:
    cache = cluster()
    cache.begin_pod_group_cycle()
    cache.assume_pod(a_pod("a", affinity=ANTI), "n1")
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None
    assert names(lists.unlisted_required_anti_affinity_pods()) == [("a", "n1")]
    assert names(lists.unlisted_affinity_pods()) == [("a", "n1")]


def test_the_lists_are_the_cycles_first_ones_a_second_member_on_the_same_node_is_left_out_too() -> None:
    cache = cluster()
    cache.begin_pod_group_cycle()
    cache.assume_pod(a_pod("a", affinity=ANTI), "n1")
    cache.assume_pod(a_pod("b", affinity=ANTI), "n1")
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None and names(lists.unlisted_required_anti_affinity_pods()) == [("a", "n1"), ("b", "n1")]


def test_a_node_listed_when_the_cycle_began_shows_its_new_members() -> None:
    cache = cluster(a_pod("old", "n1", affinity=ANTI), a_pod("empty", "n2", affinity={"podAffinity": {}}))
    cache.begin_pod_group_cycle()
    cache.assume_pod(a_pod("a", affinity=ANTI), "n1")
    cache.assume_pod(a_pod("b", affinity=ANTI), "n2")  # n2: listed for affinity (a declared, empty one), not anti
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None
    assert names(lists.unlisted_required_anti_affinity_pods()) == [("b", "n2")]
    assert names(lists.unlisted_affinity_pods()) == []


def test_only_the_anti_affinity_list_needs_required_anti_affinity() -> None:
    cache = cluster()
    cache.begin_pod_group_cycle()
    cache.assume_pod(a_pod("a", affinity=PREFERRED), "n1")
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None
    assert names(lists.unlisted_affinity_pods()) == [("a", "n1")]
    assert names(lists.unlisted_required_anti_affinity_pods()) == []


def test_a_forgotten_member_leaves_the_journal() -> None:
    cache = cluster()
    cache.begin_pod_group_cycle()
    a = a_pod("a", affinity=ANTI)
    cache.assume_pod(a, "n1")
    cache.forget_pod(a)
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None and lists.unlisted_required_anti_affinity_pods() == []


def test_a_node_emptied_during_the_cycle_stays_listed() -> None:
    """Workload-aware preemption's dry run takes pods off nodes; upstream's backup lists
    are built before that, so the node keeps its place and later members on it are seen."""
    old = a_pod("old", "n1", affinity=ANTI)
    cache = cluster(old)
    cache.begin_pod_group_cycle()
    info = cache.nodes["n1"]
    cache._unplace(info.pods[old.uid], info)
    cache.assume_pod(a_pod("a", affinity=ANTI), "n1")
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None and lists.unlisted_required_anti_affinity_pods() == []


def test_claims_count_the_users_a_cycle_added_or_took_away() -> None:
    holder = a_pod("holder", "n2", claim="kept")
    cache = cluster(holder)
    cache.begin_pod_group_cycle()
    cache.assume_pod(a_pod("a", claim="solo"), "n1")
    info = cache.nodes["n2"]
    cache._unplace(info.pods[holder.uid], info)
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None
    assert lists.claim_users_added("default", "solo") == 1
    assert lists.claim_users_added("default", "kept") == -1
    assert lists.claim_users_added("other", "solo") == 0


def test_a_new_cycle_starts_a_new_journal() -> None:
    cache = cluster()
    cache.begin_pod_group_cycle()
    cache.assume_pod(a_pod("a", affinity=ANTI), "n1")
    cache.end_pod_group_cycle()
    assert cache.snapshot().pod_group_cycle_lists() is None
    cache.begin_pod_group_cycle()
    lists = cache.snapshot().pod_group_cycle_lists()
    assert lists is not None and lists.unlisted_required_anti_affinity_pods() == []
