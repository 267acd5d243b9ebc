"""A pod-group cycle's one snapshot: members it assumed are missing from the snapshot's lists.

Upstream's ``podGroupCycle`` updates its snapshot once, then assumes each member that fits in
it (``Snapshot.AssumePod``, pkg/scheduler/backend/cache/snapshot.go): the member joins its
node's pods, but ``havePodsWithAffinityNodeInfoList``, ``havePodsWithRequiredAntiAffinityNodeInfoList``
and ``usedPVCSet`` stay as ``UpdateSnapshot`` made them. Plugins that read those lists miss an
earlier member of the same cycle on a node that was not listed already:

* InterPodAffinity's PreFilter counts existing pods' required anti-affinity over
  ``HavePodsWithRequiredAntiAffinityList`` only (``getExistingAntiAffinityCounts``,
  interpodaffinity/filtering.go), while the incoming pod's own terms walk every node;
* its PreScore, for a pod without preferred terms, walks ``HavePodsWithAffinityList`` only
  (``PreScore``, interpodaffinity/scoring.go); with preferred terms, every node;
* VolumeRestrictions asks ``IsPVCUsedByPods`` (the snapshot's ``usedPVCSet``) whether a
  ReadWriteOncePod claim is taken (``calPreFilterState``, volume_restrictions.go).

Each case is built so that the members' order is fixed (priority first) and upstream's answer
differs from one that sees every assumed member.
"""

from __future__ import annotations

from typing import Any

import pytest

from .podgroup_support import raw_group, raw_member, simulate
from tests.helpers import node, pod
from tests.plugins.test_volume_objects import pv, pvc

HOSTNAME = "kubernetes.io/hostname"
SELECT_X = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": HOSTNAME}


def anti_affinity_to_x() -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [SELECT_X]}}


def preferred_affinity_to_x(weight: int = 100) -> dict[str, Any]:
    return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "podAffinityTerm": SELECT_X}]}}


def bound(name: str, node_name: str, **kwargs: Any) -> dict[str, Any]:
    return pod(name, uid=name, cpu="100m", node_name=node_name, **kwargs)


def placements(pods: list[dict[str, Any]], nodes: list[dict[str, Any]]) -> dict[str, str]:
    _, result = simulate(nodes, pods, [raw_group("pg")])
    return {key.split("/", 1)[1]: where for key, where in result.placements}


# -- InterPodAffinity: existing pods' required anti-affinity (PreFilter) ----------------------
@pytest.mark.parametrize("listed, expected", [
    # n1 holds no pod with required anti-affinity when the cycle begins: upstream's
    # HavePodsWithRequiredAntiAffinityList is empty, so A's term never reaches B's PreFilter
    # and B joins A on the only node, against A's anti-affinity.
    (False, {"a": "n1", "b": "n1"}),
    # n1 is listed already (a bound pod with an unrelated required anti-affinity term): the
    # list's nodes are walked with their pods as they are now, A included, and B is refused.
    (True, {"a": "n1"}),
], ids=["node-not-listed", "node-listed"])
def test_an_earlier_members_anti_affinity_counts_only_on_a_node_the_snapshot_listed(
        listed: bool, expected: dict[str, str]) -> None:
    pods = [raw_member("a", "pg", priority=10, affinity=anti_affinity_to_x()),
            raw_member("b", "pg", labels={"app": "x"})]
    if listed:
        other = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "nothing"}}, "topologyKey": HOSTNAME}]}}
        pods = [bound("sentinel", "n1", affinity=other)] + pods
    found = placements(pods, [node("n1")])
    found.pop("sentinel", None)
    assert found == expected


def test_a_members_own_anti_affinity_sees_every_earlier_member() -> None:
    """The incoming pod's own terms walk every node (``getIncomingAffinityAntiAffinityCounts``
    over all nodes): B, with anti-affinity to A's label, is refused next to A."""
    pods = [raw_member("a", "pg", priority=10, labels={"app": "x"}),
            raw_member("b", "pg", affinity=anti_affinity_to_x())]
    assert placements(pods, [node("n1")]) == {"a": "n1"}


# -- InterPodAffinity: existing pods' preferred terms (PreScore) -------------------------------
def test_an_earlier_members_preferred_affinity_does_not_draw_a_member_without_preferred_terms() -> None:
    """A prefers pods labelled ``app=x``; B has that label and no terms. No node held a pod
    with affinity when the cycle began, so upstream's PreScore for B walks an empty
    ``HavePodsWithAffinityList`` (and skips): B goes to the emptier node, away from A."""
    pods = [raw_member("a", "pg", priority=10, affinity=preferred_affinity_to_x()),
            raw_member("b", "pg", labels={"app": "x"})]
    found = placements(pods, [node("n1"), node("n2")])
    assert found["a"] != found["b"]


def test_an_earlier_members_preferred_affinity_draws_a_member_on_a_listed_node() -> None:
    """The same pods, with a bound pod on each node that declares ``podAffinity: {}`` (no
    term): upstream's ``podWithAffinity`` lists both nodes, so A's term is read on its node
    and B joins it."""
    sentinels = [bound(f"s{i}", f"n{i}", affinity={"podAffinity": {}}) for i in (1, 2)]
    pods = sentinels + [raw_member("a", "pg", priority=10, affinity=preferred_affinity_to_x()),
                        raw_member("b", "pg", labels={"app": "x"})]
    found = placements(pods, [node("n1"), node("n2")])
    assert found["a"] == found["b"]


def test_a_member_with_preferred_terms_of_its_own_reads_every_earlier_member() -> None:
    """B's own preferred term (selecting nothing) makes upstream's PreScore walk every node
    and every pod on it: A's preferred affinity is read and draws B to A."""
    own = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "nothing"}}, "topologyKey": HOSTNAME}}]}}
    pods = [raw_member("a", "pg", priority=10, affinity=preferred_affinity_to_x()),
            raw_member("b", "pg", labels={"app": "x"}, affinity=own)]
    found = placements(pods, [node("n1"), node("n2")])
    assert found["a"] == found["b"]


# -- VolumeRestrictions: ReadWriteOncePod claims in use ----------------------------------------
def _claim_member(name: str, priority: int | None = None) -> dict[str, Any]:
    out = raw_member(name, "pg", cpu="100m", priority=priority)
    out["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "solo"}}]
    return out


def test_a_read_write_once_pod_claim_an_earlier_member_took_is_free_to_the_next_member() -> None:
    """Both members mount one ReadWriteOncePod claim that no pod used when the cycle began:
    the snapshot's ``usedPVCSet`` does not learn of A, so B passes VolumeRestrictions and both
    are bound (upstream leaves the conflict to the kubelet)."""
    storage = [pvc("solo", modes=["ReadWriteOncePod"], cls="", volume_name="pv-solo", bound=True),
               pv("pv-solo", modes=["ReadWriteOncePod"], phase="Bound", claim=("default", "solo", "uid-default-solo"),
                  hosts=["n1"])]
    pods = [_claim_member("a", priority=10), _claim_member("b")]
    _, result = simulate([node("n1")], pods, [raw_group("pg"), *storage])
    assert dict(result.placements) == {"default/a": "n1", "default/b": "n1"}


def test_a_read_write_once_pod_claim_in_use_before_the_cycle_stays_taken() -> None:
    storage = [pvc("solo", modes=["ReadWriteOncePod"], cls="", volume_name="pv-solo", bound=True),
               pv("pv-solo", modes=["ReadWriteOncePod"], phase="Bound", claim=("default", "solo", "uid-default-solo"),
                  hosts=["n1"])]
    holder = bound("holder", "n1")
    holder["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "solo"}}]
    _, result = simulate([node("n1")], [holder, _claim_member("a")], [raw_group("pg"), *storage])
    assert "default/a" not in dict(result.placements)
    assert result.outcomes["default/a"].message.startswith(
        "0/1 nodes are available: 1 node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
        "already in-use by another pod.")
