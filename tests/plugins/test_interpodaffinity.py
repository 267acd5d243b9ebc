"""InterPodAffinity: upstream's cases, the two forms against a brute-force reference, args, hints.

The table tests follow upstream's ``filtering_test.go`` / ``scoring_test.go`` cases that
matter (symmetry, namespaces and namespace selectors, the first pod of a self-affine
group, nodes without the topology label, hardPodAffinityWeight,
ignorePreferredTermsOfExistingPods). The property test builds random clusters, changes
them after the plugin's index exists, and checks that the batch form, the per-node form
and a plain re-statement of upstream's loops over every pod (``Reference``) agree.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kubesched.cache.cache import Cache
from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.clock import VirtualClock
from kubesched.framework.args import ArgsError
from kubesched.framework.config import API_VERSION, KIND, ConfigError, parse_config
from kubesched.framework.cycle_state import CycleState
from kubesched.scheduler.handle import HandleHub
from kubesched.framework.status import Code
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins.interpodaffinity import InterPodAffinityArgs, new, parse_args
from kubesched.plugins.interpodaffinity.index import AffinityIndex, RowCounts
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RACK = "example.com/rack"
AFFINITY = ("UnschedulableAndUnresolvable", "node(s) didn't match pod affinity rules")
ANTI = ("Unschedulable", "node(s) didn't match pod anti-affinity rules")
EXISTING = ("Unschedulable", "node(s) didn't satisfy existing pods anti-affinity rules")
_uid = itertools.count()


# -- objects -----------------------------------------------------------------------
def node(name: str, hostname: bool = True, **labels: str) -> dict:
    meta = {HOST: name} if hostname else {}
    for key, value in labels.items():
        meta[{"zone": ZONE, "rack": RACK}.get(key, key)] = value
    return {"kind": "Node", "metadata": {"name": name, "labels": meta},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def term(topology_key: str, labels: Mapping[str, str] | None = None, expressions: list | None = None,
         namespaces: list[str] | None = None, ns_selector: Mapping | None = None) -> dict:
    selector: dict[str, Any] = {}
    if labels is not None:
        selector["matchLabels"] = dict(labels)
    if expressions is not None:
        selector["matchExpressions"] = expressions
    out: dict[str, Any] = {"labelSelector": selector, "topologyKey": topology_key}
    if namespaces is not None:
        out["namespaces"] = namespaces
    if ns_selector is not None:
        out["namespaceSelector"] = ns_selector
    return out


def affinity(required: list | None = None, anti: list | None = None, preferred: list | None = None,
             preferred_anti: list | None = None) -> dict:
    req, pref = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
    out: dict[str, Any] = {}
    if required or preferred:
        out["podAffinity"] = {}
        if required:
            out["podAffinity"][req] = required
        if preferred:
            out["podAffinity"][pref] = [{"weight": w, "podAffinityTerm": t} for w, t in preferred]
    if anti or preferred_anti:
        out["podAntiAffinity"] = {}
        if anti:
            out["podAntiAffinity"][req] = anti
        if preferred_anti:
            out["podAntiAffinity"][pref] = [{"weight": w, "podAffinityTerm": t} for w, t in preferred_anti]
    return out


def pod(name: str, labels: Mapping[str, str] | None = None, on: str | None = None, namespace: str = "default",
        aff: Mapping | None = None) -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if on:
        spec["nodeName"] = on
    if aff:
        spec["affinity"] = dict(aff)
    return {"kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-{next(_uid)}",
                                        "labels": dict(labels or {})}, "spec": spec}


class Cluster:
    """A cache (nodes, namespaces, bound pods) and an InterPodAffinity plugin on it."""

    def __init__(self, nodes: list[dict], pods: list[dict] = (), namespaces: Mapping[str, Mapping] | None = None,
                 args: InterPodAffinityArgs | None = None, plugin_first: bool = False) -> None:
        self.cache = Cache()
        self.handle = HandleHub(self.cache, VirtualClock(), None).handle("default-scheduler")
        for name, labels in (namespaces or {}).items():
            self.cache.set_namespace(name, {"kubernetes.io/metadata.name": name, **labels})
        for n in nodes:
            self.cache.add_node(parse_node(n))
        if plugin_first:
            self.plugin = new(args, self.handle)
        self.pods = [self.add(p) for p in pods]
        if not plugin_first:
            self.plugin = new(args, self.handle)

    def add(self, raw: dict):
        info = parse_pod(raw)
        self.cache.add_pod(info)
        return info

    @property
    def snapshot(self):
        return self.cache.snapshot()

    def names(self) -> list[str]:
        return self.cache.node_names()

    def rows(self) -> np.ndarray:
        return np.asarray(self.cache.table.order, dtype=np.int64)


def run_filter(cluster: Cluster, raw_pod: dict) -> dict[str, tuple | None] | str:
    """Per node: None (passes) or (code, reason); "Skip" when PreFilter skips.
    Asserts the batch and the per-node form agree."""
    incoming = parse_pod(raw_pod)
    plugin, snap = cluster.plugin, cluster.snapshot
    state = CycleState()
    result, status = plugin.pre_filter(state, incoming, snap)
    assert result is None
    if status is not None and status.code == Code.SKIP:
        return "Skip"
    assert status is None, status
    verdicts = plugin.filter_nodes(state, incoming, snap, snap.table.alive[: snap.table.size])
    batch, per_node = {}, {}
    for name in cluster.names():
        info = cluster.cache.nodes[name]
        code = int(verdicts.codes[info.row])
        s = verdicts.statuses[code - 1] if code else None
        batch[name] = (s.code.label, *s.reasons) if s else None
        s = plugin.filter(state, incoming, info)
        per_node[name] = (s.code.label, *s.reasons) if s else None
    assert batch == per_node
    return batch


def run_score(cluster: Cluster, raw_pod: dict, names: list[str] | None = None) -> tuple[dict, dict] | str:
    """(raw, normalised) scores per node, or "Skip" when PreScore skips. Both forms must agree."""
    incoming = parse_pod(raw_pod)
    plugin, snap = cluster.plugin, cluster.snapshot
    names = names or cluster.names()
    rows = np.asarray([cluster.cache.nodes[n].row for n in names], dtype=np.int64)
    state = CycleState()
    status = plugin.pre_score(state, incoming, snap, rows)
    if status is not None and status.code == Code.SKIP:
        return "Skip"
    assert status is None, status
    batch = plugin.score_nodes(state, incoming, snap, rows).tolist()
    per_node = [plugin.score(state, incoming, cluster.cache.nodes[n]) for n in names]
    assert batch == per_node
    normalized = plugin.normalize_score(state, incoming, np.asarray(batch, dtype=np.int64)).tolist()
    return dict(zip(names, batch)), dict(zip(names, normalized))


# -- Filter: the incoming pod's required affinity ------------------------------------------
SECURITY = {"service": "securityscan"}


def test_required_affinity_needs_a_matching_pod_in_the_nodes_domain():
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2")],
                [pod("s", SECURITY, on="n1")])
    got = run_filter(c, pod("p", aff=affinity(required=[term(ZONE, {"service": "securityscan"})])))
    assert got == {"n1": None, "n2": None, "n3": AFFINITY}


def test_required_affinity_with_in_and_exists_expressions():
    c = Cluster([node("n1"), node("n2")], [pod("s", {"service": "securityscan", "tier": "x"}, on="n1")])
    expressions = [{"key": "service", "operator": "In", "values": ["securityscan", "value2"]},
                   {"key": "tier", "operator": "Exists"}]
    assert run_filter(c, pod("p", aff=affinity(required=[term(HOST, expressions=expressions)]))) == {
        "n1": None, "n2": AFFINITY}
    not_in = [{"key": "service", "operator": "NotIn", "values": ["securityscan"]}]
    assert run_filter(c, pod("p", SECURITY, aff=affinity(required=[term(HOST, expressions=not_in)]))) == {
        "n1": AFFINITY, "n2": AFFINITY}


def test_one_existing_pod_must_match_all_affinity_terms():
    # upstream: "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity" family: a pod matching
    # one term and another pod matching the other do not together satisfy the pod.
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z1")],
                [pod("a", {"app": "a"}, on="n1"), pod("b", {"tier": "t"}, on="n2"), pod("m", {"x": "y"}, on="n2")])
    terms = [term(ZONE, {"app": "a"}), term(HOST, {"tier": "t"})]
    assert run_filter(c, pod("p", aff=affinity(required=terms))) == {"n1": AFFINITY, "n2": AFFINITY}
    c.add(pod("ab", {"app": "a", "tier": "t"}, on="n2"))
    assert run_filter(c, pod("p", aff=affinity(required=terms))) == {"n1": AFFINITY, "n2": None}


def test_nodes_without_the_topology_label_fail_affinity():
    c = Cluster([node("n1", zone="z1"), node("n2")], [pod("s", SECURITY, on="n1")])
    got = run_filter(c, pod("p", aff=affinity(required=[term(ZONE, SECURITY)])))
    assert got == {"n1": None, "n2": AFFINITY}


def test_first_pod_of_a_self_affine_group_may_go_anywhere_with_the_label():
    # No pod matches anywhere and the pod matches its own term: every node carrying the key passes.
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2"), node("n3")], [pod("other", {"app": "x"}, on="n1")])
    got = run_filter(c, pod("p", {"app": "web"}, aff=affinity(required=[term(ZONE, {"app": "web"})])))
    assert got == {"n1": None, "n2": None, "n3": AFFINITY}


def test_first_pod_rule_needs_the_pod_to_match_its_own_terms():
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")])
    got = run_filter(c, pod("p", {"app": "db"}, aff=affinity(required=[term(ZONE, {"app": "web"})])))
    assert got == {"n1": AFFINITY, "n2": AFFINITY}


def test_first_pod_rule_needs_its_own_namespace_in_the_term():
    c = Cluster([node("n1", zone="z1")])
    own_elsewhere = term(ZONE, {"app": "web"}, namespaces=["other"])
    assert run_filter(c, pod("p", {"app": "web"}, aff=affinity(required=[own_elsewhere]))) == {"n1": AFFINITY}


def test_first_pod_rule_does_not_apply_once_a_matching_pod_exists():
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")], [pod("w", {"app": "web"}, on="n1")])
    got = run_filter(c, pod("p", {"app": "web"}, aff=affinity(required=[term(ZONE, {"app": "web"})])))
    assert got == {"n1": None, "n2": AFFINITY}


def test_a_matching_pod_on_a_node_without_the_key_counts_as_none():
    # affinityCounts only holds pairs of labelled nodes: the first-pod rule still applies.
    c = Cluster([node("n1"), node("n2", zone="z2")], [pod("w", {"app": "web"}, on="n1")])
    got = run_filter(c, pod("p", {"app": "web"}, aff=affinity(required=[term(ZONE, {"app": "web"})])))
    assert got == {"n1": AFFINITY, "n2": None}


# -- Filter: anti-affinity, both directions ----------------------------------------------
def test_required_anti_affinity_blocks_the_domain_of_a_matching_pod():
    nodes = [node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2")]
    c = Cluster(nodes, [pod("s", SECURITY, on="n1")])
    assert run_filter(c, pod("p", aff=affinity(anti=[term(HOST, SECURITY)]))) == {"n1": ANTI, "n2": None, "n3": None}
    assert run_filter(c, pod("p", aff=affinity(anti=[term(ZONE, SECURITY)]))) == {"n1": ANTI, "n2": ANTI, "n3": None}


def test_anti_affinity_pairs_are_shared_between_terms_of_one_key():
    # Upstream counts by (key, value): a pod matching term A blocks the pair for term B of the same key.
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")], [pod("a", {"app": "a"}, on="n1")])
    terms = [term(ZONE, {"app": "a"}), term(ZONE, {"app": "b"})]
    assert run_filter(c, pod("p", aff=affinity(anti=terms))) == {"n1": ANTI, "n2": None}


def test_existing_pods_anti_affinity_is_symmetric():
    # The incoming pod has no affinity at all; an existing pod's anti-affinity selects it.
    nodes = [node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2")]
    c = Cluster(nodes, [pod("guard", {"app": "guard"}, on="n1", aff=affinity(anti=[term(ZONE, {"app": "web"})]))])
    assert run_filter(c, pod("p", {"app": "web"})) == {"n1": EXISTING, "n2": EXISTING, "n3": None}
    assert run_filter(c, pod("q", {"app": "db"})) == "Skip"


def test_existing_anti_affinity_on_a_node_without_the_key_means_skip():
    c = Cluster([node("n1"), node("n2", zone="z2")],
                [pod("guard", on="n1", aff=affinity(anti=[term(ZONE, {"app": "web"})]))])
    assert run_filter(c, pod("p", {"app": "web"})) == "Skip"


def test_pre_filter_skips_pods_without_required_terms():
    c = Cluster([node("n1")], [pod("s", SECURITY, on="n1")])
    assert run_filter(c, pod("p", SECURITY, aff=affinity(preferred=[(5, term(HOST, SECURITY))]))) == "Skip"


def test_affinity_failure_comes_before_anti_affinity_failure():
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")],
                [pod("a", {"app": "a"}, on="n1"), pod("b", {"app": "b"}, on="n2"),
                 pod("g", on="n2", aff=affinity(anti=[term(HOST, {"app": "p"})]))])
    raw = pod("p", {"app": "p"}, aff=affinity(required=[term(ZONE, {"app": "a"})], anti=[term(ZONE, {"app": "a"})]))
    assert run_filter(c, raw) == {"n1": ANTI, "n2": AFFINITY}
    raw = pod("p", {"app": "p"}, aff=affinity(anti=[term(ZONE, {"app": "b"})]))
    assert run_filter(c, raw) == {"n1": None, "n2": ANTI}
    assert run_filter(c, pod("p", {"app": "p"})) == {"n1": None, "n2": EXISTING}


# -- namespaces ------------------------------------------------------------------------
NAMESPACES = {"team-a": {"env": "prod"}, "team-b": {"env": "dev"}}


def test_a_term_without_namespaces_selects_the_pods_own_namespace():
    c = Cluster([node("n1"), node("n2")], [pod("s", SECURITY, on="n1", namespace="team-a")], NAMESPACES)
    assert run_filter(c, pod("p", aff=affinity(anti=[term(HOST, SECURITY)]))) == {"n1": None, "n2": None}
    assert run_filter(c, pod("p", namespace="team-a", aff=affinity(anti=[term(HOST, SECURITY)]))) == {
        "n1": ANTI, "n2": None}
    listed = term(HOST, SECURITY, namespaces=["team-b", "team-a"])
    assert run_filter(c, pod("p", aff=affinity(anti=[listed]))) == {"n1": ANTI, "n2": None}


def test_namespace_selector_selects_by_namespace_labels():
    c = Cluster([node("n1"), node("n2"), node("n3")],
                [pod("a", SECURITY, on="n1", namespace="team-a"), pod("b", SECURITY, on="n2", namespace="team-b"),
                 pod("u", SECURITY, on="n3", namespace="unseen")], NAMESPACES)
    prod = term(HOST, SECURITY, ns_selector={"matchLabels": {"env": "prod"}})
    assert run_filter(c, pod("p", aff=affinity(anti=[prod]))) == {"n1": ANTI, "n2": None, "n3": None}
    everything = term(HOST, SECURITY, ns_selector={})
    assert run_filter(c, pod("p", aff=affinity(anti=[everything]))) == {"n1": ANTI, "n2": ANTI, "n3": ANTI}
    # A namespace with no Namespace object has only kubernetes.io/metadata.name.
    by_name = term(HOST, SECURITY, ns_selector={"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["unseen"]}]})
    assert run_filter(c, pod("p", aff=affinity(anti=[by_name]))) == {"n1": None, "n2": None, "n3": ANTI}
    # namespaces and namespaceSelector are ORed.
    both = term(HOST, SECURITY, namespaces=["team-b"], ns_selector={"matchLabels": {"env": "prod"}})
    assert run_filter(c, pod("p", aff=affinity(anti=[both]))) == {"n1": ANTI, "n2": ANTI, "n3": None}


def test_existing_pods_namespace_selector_reads_the_incoming_pods_namespace_labels():
    guard = affinity(anti=[term(ZONE, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})])
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")], [pod("g", on="n1", namespace="ops", aff=guard)],
                NAMESPACES)
    assert run_filter(c, pod("p", {"app": "web"}, namespace="team-a")) == {"n1": EXISTING, "n2": None}
    assert run_filter(c, pod("p", {"app": "web"}, namespace="team-b")) == "Skip"


def test_namespace_label_changes_are_seen_by_cached_matches():
    c = Cluster([node("n1"), node("n2")], [pod("a", SECURITY, on="n1", namespace="team-b")], NAMESPACES)
    prod = term(HOST, SECURITY, ns_selector={"matchLabels": {"env": "prod"}})
    assert run_filter(c, pod("p", aff=affinity(anti=[prod]))) == {"n1": None, "n2": None}
    c.cache.set_namespace("team-b", {"kubernetes.io/metadata.name": "team-b", "env": "prod"})
    assert run_filter(c, pod("p", aff=affinity(anti=[prod]))) == {"n1": ANTI, "n2": None}
    guard = affinity(anti=[term(HOST, {"app": "web"}, ns_selector={"matchLabels": {"env": "prod"}})])
    c.add(pod("g", on="n2", namespace="ops", aff=guard))
    assert run_filter(c, pod("w", {"app": "web"}, namespace="team-a")) == {"n1": None, "n2": EXISTING}
    c.cache.set_namespace("team-a", {"kubernetes.io/metadata.name": "team-a", "env": "dev"})
    assert run_filter(c, pod("w", {"app": "web"}, namespace="team-a")) == "Skip"


# -- the index follows the cache ----------------------------------------------------------
def test_counts_follow_pod_removal_and_node_changes():
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")], [pod("s", SECURITY, on="n1")], plugin_first=True)
    anti = pod("p", aff=affinity(anti=[term(ZONE, SECURITY)]))
    assert run_filter(c, anti) == {"n1": ANTI, "n2": None}
    c.cache.remove_pod(c.pods[0])
    assert run_filter(c, anti) == {"n1": None, "n2": None}
    c.add(pod("s2", SECURITY, on="n2"))
    assert run_filter(c, anti) == {"n1": None, "n2": ANTI}
    c.cache.update_node(parse_node(node("n1", zone="z2")))  # n1 joins n2's zone
    assert run_filter(c, anti) == {"n1": ANTI, "n2": ANTI}
    c.cache.remove_node("n2")  # its pod is no longer on any node
    assert run_filter(c, anti) == {"n1": None}


def test_watched_conditions_see_label_sets_that_appear_later():
    c = Cluster([node("n1"), node("n2"), node("n3")], [pod("w", {"app": "web"}, on="n1")])
    by_label = pod("p", aff=affinity(anti=[term(HOST, {"app": "web"})]))
    by_expression = pod("q", {"app": "q"}, aff=affinity(anti=[term(HOST, expressions=[
        {"key": "app", "operator": "NotIn", "values": ["db", "q"]}])]))
    assert run_filter(c, by_label) == {"n1": ANTI, "n2": None, "n3": None}
    assert run_filter(c, by_expression) == {"n1": ANTI, "n2": None, "n3": None}
    c.add(pod("w2", {"app": "web", "id": "2"}, on="n2"))  # a label set the index has not seen
    c.add(pod("d", {"app": "db", "id": "3"}, on="n3"))
    assert run_filter(c, by_label) == {"n1": ANTI, "n2": ANTI, "n3": None}
    assert run_filter(c, by_expression) == {"n1": ANTI, "n2": ANTI, "n3": None}


def test_assume_and_forget_are_counted():
    c = Cluster([node("n1"), node("n2")])
    incoming = parse_pod(pod("s", SECURITY, on="n1"))
    c.cache.assume_pod(incoming, "n1")
    anti = pod("p", aff=affinity(anti=[term(HOST, SECURITY)]))
    assert run_filter(c, anti) == {"n1": ANTI, "n2": None}
    c.cache.forget_pod(incoming)
    assert run_filter(c, anti) == {"n1": None, "n2": None}


def test_pre_filter_extensions_add_and_remove_pods_on_a_cloned_state():
    c = Cluster([node("n1", zone="z1"), node("n2", zone="z2")], [pod("s", SECURITY, on="n1")])
    plugin, snap = c.plugin, c.snapshot
    incoming = parse_pod(pod("p", {"app": "web"}, aff=affinity(anti=[term(ZONE, SECURITY)])))
    state = CycleState()
    plugin.pre_filter(state, incoming, snap)
    n1, n2 = c.cache.nodes["n1"], c.cache.nodes["n2"]
    what_if = state.clone()
    plugin.remove_pod(what_if, incoming, c.pods[0], n1)
    plugin.add_pod(what_if, incoming, parse_pod(pod("s2", SECURITY, on="n2")), n2)
    plugin.add_pod(what_if, incoming, parse_pod(pod("g", on="n2", aff=affinity(anti=[term(HOST, {"app": "web"})]))), n2)
    assert plugin.filter(what_if, incoming, n1) is None
    assert plugin.filter(what_if, incoming, n2).reasons == (ANTI[1],)
    codes = plugin.filter_nodes(what_if, incoming, snap, snap.table.alive[: snap.table.size]).codes
    assert (int(codes[n1.row]), int(codes[n2.row])) == (0, 2)
    assert plugin.filter(state, incoming, n1).reasons == (ANTI[1],)  # the original is untouched


def test_a_snapshot_of_another_cache_is_refused():
    c, other = Cluster([node("n1")]), Cluster([node("n1")])
    with pytest.raises(RuntimeError, match="not of the cache"):
        c.plugin.pre_filter(CycleState(), parse_pod(pod("p")), other.snapshot)


# -- Score -------------------------------------------------------------------------------
def test_preferred_affinity_and_anti_affinity_weights_per_domain():
    nodes = [node("n1", zone="z1"), node("n2", zone="z1"), node("n3", zone="z2"), node("n4")]
    c = Cluster(nodes, [pod("a", {"app": "a"}, on="n1"), pod("b", {"app": "b"}, on="n3"), pod("b2", {"app": "b"}, on="n4")])
    raw = pod("p", aff=affinity(preferred=[(5, term(ZONE, {"app": "a"})), (3, term(HOST, {"app": "b"}))],
                                preferred_anti=[(2, term(ZONE, {"app": "b"}))]))
    scores, normalized = run_score(c, raw)
    assert scores == {"n1": 5, "n2": 5, "n3": 3 - 2, "n4": 3}
    assert normalized == {"n1": 100, "n2": 100, "n3": 0, "n4": 50}


def test_normalisation_is_min_max_in_float_truncated():
    nodes = [node("n1", zone="z1"), node("n2", zone="z2"), node("n3", zone="z3")]
    c = Cluster(nodes, [pod("a", {"app": "a"}, on="n1"), pod("b", {"app": "b"}, on="n3")])
    raw = pod("p", aff=affinity(preferred=[(3, term(ZONE, {"app": "b"}))], preferred_anti=[(5, term(ZONE, {"app": "a"}))]))
    scores, normalized = run_score(c, raw)
    assert scores == {"n1": -5, "n2": 0, "n3": 3}
    assert normalized == {"n1": 0, "n2": 62, "n3": 100}  # 100 * 5/8 = 62.5
    _, only_two = run_score(c, raw, names=["n1", "n2"])
    assert only_two == {"n1": 0, "n2": 100}  # min and max over the scored nodes only


def test_normalisation_keeps_float_rounding():
    # 100 * (29 / 100) is 28.999999999999996 in float64: upstream gives 28, not 29.
    nodes = [node("n1", zone="z1"), node("n2", zone="z2"), node("n3", zone="z3")]
    c = Cluster(nodes, [pod("b", {"app": "b"}, on="n2"), pod("c", {"app": "c"}, on="n3")])
    raw = pod("p", aff=affinity(preferred=[(29, term(ZONE, {"app": "b"})), (100, term(ZONE, {"app": "c"}))]))
    assert run_score(c, raw) == ({"n1": 0, "n2": 29, "n3": 100}, {"n1": 0, "n2": 28, "n3": 100})


def test_existing_pods_preferred_terms_score_symmetrically():
    nodes = [node("n1", zone="z1"), node("n2", zone="z2"), node("n3", zone="z3")]
    c = Cluster(nodes, [pod("fan", on="n1", aff=affinity(preferred=[(7, term(ZONE, {"app": "web"}))])),
                        pod("foe", on="n2", aff=affinity(preferred_anti=[(4, term(ZONE, {"app": "web"}))]))])
    scores, normalized = run_score(c, pod("p", {"app": "web"}))
    assert scores == {"n1": 7, "n2": -4, "n3": 0}
    assert normalized == {"n1": 100, "n2": 0, "n3": 36}
    assert run_score(c, pod("q", {"app": "db"})) == "Skip"


@pytest.mark.parametrize("weight, expected", [(1, {"n1": 1, "n2": 0}), (5, {"n1": 5, "n2": 0}), (0, "Skip")])
def test_hard_pod_affinity_weight_scores_existing_required_affinity(weight, expected):
    nodes = [node("n1", zone="z1"), node("n2", zone="z2")]
    existing = [pod("needs-web", {"app": "api"}, on="n1", aff=affinity(required=[term(ZONE, {"app": "web"})]))]
    c = Cluster(nodes, existing, args=InterPodAffinityArgs(hard_pod_affinity_weight=weight))
    got = run_score(c, pod("p", {"app": "web"}))
    assert (got if got == "Skip" else got[0]) == expected


def test_ignore_preferred_terms_of_existing_pods():
    nodes = [node("n1", zone="z1"), node("n2", zone="z2")]
    existing = [pod("fan", {"app": "a"}, on="n1", aff=affinity(preferred=[(7, term(ZONE, {"app": "web"}))]))]
    c = Cluster(nodes, existing, args=InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True))
    assert run_score(c, pod("p", {"app": "web"})) == "Skip"
    # With preferred terms of its own, the existing pods' preferences still count (upstream).
    raw = pod("p", {"app": "web"}, aff=affinity(preferred=[(2, term(ZONE, {"app": "a"}))]))
    assert run_score(c, raw)[0] == {"n1": 9, "n2": 0}


def test_pre_score_skips_when_no_term_meets_a_pod_but_not_when_they_cancel_out():
    nodes = [node("n1", zone="z1"), node("n2", zone="z2"), node("n3")]
    c = Cluster(nodes, [pod("x", {"app": "x"}, on="n3")])
    assert run_score(c, pod("p", aff=affinity(preferred=[(5, term(ZONE, {"app": "x"}))]))) == "Skip"
    c.add(pod("a", {"app": "a"}, on="n1"))
    raw = pod("p", aff=affinity(preferred=[(5, term(ZONE, {"app": "a"}))], preferred_anti=[(5, term(ZONE, {"app": "a"}))]))
    assert run_score(c, raw) == ({"n1": 0, "n2": 0, "n3": 0}, {"n1": 0, "n2": 0, "n3": 0})


# -- args ---------------------------------------------------------------------------------
def test_args_defaults_and_values():
    assert parse_args(None) == InterPodAffinityArgs(1, False)
    assert parse_args({"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": True}) == InterPodAffinityArgs(0, True)
    assert parse_args({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs",
                       "hardPodAffinityWeight": 100}).hard_pod_affinity_weight == 100


@pytest.mark.parametrize("raw, field, message", [
    ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight", "Invalid value: 101: not in valid range [0, 100]"),
    ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight", "Invalid value: -1: not in valid range [0, 100]"),
    ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight", "must be an integer"),
    ({"ignorePreferredTermsOfExistingPods": "yes"}, "ignorePreferredTermsOfExistingPods", "must be a boolean"),
    ({"hardPodAffinityWieght": 5}, "hardPodAffinityWieght", 'unknown field "hardPodAffinityWieght"'),
])
def test_args_are_validated_strictly(raw, field, message):
    with pytest.raises(ArgsError) as err:
        parse_args(raw)
    assert err.value.field == field and message in err.value.message


def test_args_through_a_scheduler_configuration():
    registry = in_tree_registry()
    profile = {"pluginConfig": [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 7}}]}
    raw = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}
    config = parse_config(raw, registry, UPSTREAM_ONLY)
    assert config.profiles[0].plugin_config["InterPodAffinity"] == InterPodAffinityArgs(7, False)
    profile["pluginConfig"][0]["args"] = {"hardPodAffinityWeight": 200}
    with pytest.raises(ConfigError, match=r"pluginConfig\[0\]\.args\.hardPodAffinityWeight: Invalid value: 200"):
        parse_config(raw, registry, UPSTREAM_ONLY)


# -- queueing hints ------------------------------------------------------------------------
def _hints(c: Cluster) -> dict:
    return {r.event.resource: (r.event, r.hint) for r in c.plugin.events_to_register()}


def test_registered_events():
    hints = _hints(Cluster([node("n1")]))
    assert hints[EventResource.ASSIGNED_POD][0].action == ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
    assert hints[EventResource.NODE][0].action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    assert hints[EventResource.POD][0].action == ActionType.UPDATE_POD_LABEL


def test_assigned_pod_hints():
    hint = _hints(Cluster([node("n1")]))[EventResource.ASSIGNED_POD][1]
    wants_web = parse_pod(pod("p", aff=affinity(required=[term(ZONE, {"app": "web"})])))
    avoids_web = parse_pod(pod("q", {"app": "x"}, aff=affinity(anti=[term(ZONE, {"app": "web"})])))
    web, db = parse_pod(pod("w", {"app": "web"}, on="n1")), parse_pod(pod("d", {"app": "db"}, on="n1"))
    unscheduled = parse_pod(pod("u", {"app": "web"}))
    assert hint(wants_web, None, web) == QueueingHint.QUEUE
    assert hint(wants_web, None, db) == QueueingHint.SKIP
    assert hint(wants_web, None, unscheduled) == QueueingHint.SKIP
    assert hint(wants_web, db, web) == QueueingHint.QUEUE  # relabelled to match
    assert hint(avoids_web, web, None) == QueueingHint.QUEUE  # the blocking pod is gone
    assert hint(avoids_web, db, None) == QueueingHint.SKIP
    assert hint(avoids_web, web, db) == QueueingHint.QUEUE
    guard = parse_pod(pod("g", on="n1", aff=affinity(anti=[term(ZONE, {"app": "x"})])))
    assert hint(avoids_web, guard, None) == QueueingHint.QUEUE  # its anti-affinity selected the pod


def test_node_hints():
    hint = _hints(Cluster([node("n1")]))[EventResource.NODE][1]
    wants_zone = parse_pod(pod("p", aff=affinity(required=[term(ZONE, {"app": "web"})])))
    assert hint(wants_zone, None, parse_node(node("n2", zone="z1"))) == QueueingHint.QUEUE
    assert hint(wants_zone, None, parse_node(node("n2"))) == QueueingHint.SKIP
    assert hint(parse_pod(pod("plain")), None, parse_node(node("n2"))) == QueueingHint.QUEUE


# -- end to end ---------------------------------------------------------------------------
def _simulate(objects: list[dict]) -> tuple[dict[str, str | None], dict[str, str]]:
    snapshot = snapshot_from_objects([("test", o) for o in objects])
    registry = in_tree_registry()
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    result = Simulation(snapshot, config, registry, tie_break="name").run()
    return {k: o.node for k, o in result.outcomes.items()}, {k: o.message for k, o in result.outcomes.items()}


def test_simulation_spreads_anti_affine_replicas_and_packs_affine_ones():
    nodes = [node(f"n{i}", zone=f"z{i % 2}") for i in range(4)]
    replicas = [pod(f"web-{i}", {"app": "web"}, aff=affinity(anti=[term(HOST, {"app": "web"})])) for i in range(5)]
    followers = [pod(f"cache-{i}", {"app": "cache"}, aff=affinity(required=[term(ZONE, {"app": "db"})])) for i in range(2)]
    placed, messages = _simulate(nodes + [pod("db", {"app": "db"}, on="n1")] + replicas + followers)
    web_nodes = [placed[f"default/web-{i}"] for i in range(4)]
    assert sorted(web_nodes) == ["n0", "n1", "n2", "n3"]
    assert placed["default/web-4"] is None
    # DefaultPreemption (on by default) finds no lower-priority pod to evict
    assert messages["default/web-4"] == (
        "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    )
    assert {placed["default/cache-0"], placed["default/cache-1"]} <= {"n1", "n3"}  # zone z1, with the db


def test_kubesched_simulate_command_explains_affinity(tmp_path: Path):
    from click.testing import CliRunner

    from kubesched.cli.main import cli

    objects = [node("n1", zone="z1"), node("n2", zone="z2"), pod("db", {"app": "db"}, on="n1"),
               pod("api", {"app": "api"}, aff=affinity(required=[term(ZONE, {"app": "db"})])),
               pod("lonely", {"app": "l"}, aff=affinity(required=[term(ZONE, {"app": "nothing"})]))]
    for o in objects:
        o["apiVersion"] = "v1"
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    out = tmp_path / "out.txt"
    result = CliRunner().invoke(cli, ["simulate", str(snap), "--tie-break", "name", "--output", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert out.read_text() == "default/api -> n1\n"
    assert "default/lonely: 0/2 nodes are available: 2 node(s) didn't match pod affinity rules." in result.output


# -- property: batch form == per-node form == upstream's loops over every pod -------------------
def _selects(t: Any, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]) -> bool:
    """``AffinityTerm.Matches`` with upstream's namespace handling, pod by pod."""
    if namespace in t.namespaces:
        in_namespace = True
    elif t.namespace_selector.nothing:
        in_namespace = False
    else:
        in_namespace = t.namespace_selector.matches(ns_labels)
    return in_namespace and t.selector.matches(labels)


class Reference:
    """Upstream's PreFilter/Filter/PreScore/Score/NormalizeScore, walking every placed pod."""

    def __init__(self, cache: Cache, args: InterPodAffinityArgs) -> None:
        self.cache, self.args = cache, args

    def _placed(self):
        for info in self.cache.nodes.values():
            for existing in info.pods.values():
                yield info.node.labels, existing

    def filter(self, p: Any) -> dict[str, tuple | None] | str:
        ns = self.cache.namespace_labels
        required, anti_terms = p.pod_affinity.required_affinity, p.pod_affinity.required_anti_affinity
        existing, aff, anti = Counter(), Counter(), Counter()
        for labels, e in self._placed():
            for t in e.pod_affinity.required_anti_affinity:
                if t.topology_key in labels and _selects(t, p.namespace, p.labels, ns(p.namespace)):
                    existing[(t.topology_key, labels[t.topology_key])] += 1
            if required and all(_selects(t, e.namespace, e.labels, ns(e.namespace)) for t in required):
                for t in required:
                    if t.topology_key in labels:
                        aff[(t.topology_key, labels[t.topology_key])] += 1
            for t in anti_terms:
                if t.topology_key in labels and _selects(t, e.namespace, e.labels, ns(e.namespace)):
                    anti[(t.topology_key, labels[t.topology_key])] += 1
        if not existing and not required and not anti_terms:
            return "Skip"
        self_match = bool(required) and all(_selects(t, p.namespace, p.labels, ns(p.namespace)) for t in required)
        out = {}
        for name, info in self.cache.nodes.items():
            labels = info.node.labels
            verdict = None
            exist, missing = True, False
            for t in required:
                if t.topology_key not in labels:
                    missing = True
                elif aff[(t.topology_key, labels[t.topology_key])] <= 0:
                    exist = False
            if missing or (not exist and not (not aff and self_match)):
                verdict = AFFINITY
            elif any(t.topology_key in labels and anti[(t.topology_key, labels[t.topology_key])] > 0 for t in anti_terms):
                verdict = ANTI
            elif any(existing[(k, v)] > 0 for k, v in labels.items()):
                verdict = EXISTING
            out[name] = verdict
        return out

    def scores(self, p: Any, names: list[str]) -> tuple[dict, dict] | str:
        aff = p.pod_affinity
        constraints = bool(aff.preferred_affinity or aff.preferred_anti_affinity)
        if self.args.ignore_preferred_terms_of_existing_pods and not constraints:
            return "Skip"
        ns = self.cache.namespace_labels
        topo: Counter = Counter()
        fired = False

        def process(t: Any, weight: int, target_ns: str, target_labels: Mapping, labels: Mapping) -> None:
            nonlocal fired
            if _selects(t, target_ns, target_labels, ns(target_ns)) and t.topology_key in labels:
                topo[(t.topology_key, labels[t.topology_key])] += weight
                fired = True

        for labels, e in self._placed():
            for w in aff.preferred_affinity:
                process(w.term, w.weight, e.namespace, e.labels, labels)
            for w in aff.preferred_anti_affinity:
                process(w.term, -w.weight, e.namespace, e.labels, labels)
            if self.args.hard_pod_affinity_weight > 0:
                for t in e.pod_affinity.required_affinity:
                    process(t, self.args.hard_pod_affinity_weight, p.namespace, p.labels, labels)
            for w in e.pod_affinity.preferred_affinity:
                process(w.term, w.weight, p.namespace, p.labels, labels)
            for w in e.pod_affinity.preferred_anti_affinity:
                process(w.term, -w.weight, p.namespace, p.labels, labels)
        if not fired:
            return "Skip"
        keys = {k for k, _ in topo}
        raw = {}
        for name in names:
            labels = self.cache.nodes[name].node.labels
            raw[name] = sum(topo[(k, labels[k])] for k in keys if k in labels)
        lo, hi = min(raw.values()), max(raw.values())
        normalized = {n: int(100.0 * ((s - lo) / (hi - lo))) if hi > lo else 0 for n, s in raw.items()}
        return raw, normalized


LABEL_VALUES = {"app": ["a", "b", "c"], "tier": ["x", "y"]}
TOPOLOGY_KEYS = [HOST, ZONE, RACK]
NS_CHOICES = ["default", "team-a", "team-b", "unseen"]


@st.composite
def label_sets(draw) -> dict:
    return {k: draw(st.sampled_from(v)) for k, v in LABEL_VALUES.items() if draw(st.booleans())}


@st.composite
def terms(draw) -> dict:
    key = draw(st.sampled_from(list(LABEL_VALUES)))
    kind = draw(st.sampled_from(["labels", "in", "notin", "exists", "doesnotexist", "empty"]))
    if kind == "labels":
        t = term(draw(st.sampled_from(TOPOLOGY_KEYS)), draw(label_sets()))
    elif kind == "empty":
        t = term(draw(st.sampled_from(TOPOLOGY_KEYS)), {})
    else:
        op = {"in": "In", "notin": "NotIn", "exists": "Exists", "doesnotexist": "DoesNotExist"}[kind]
        e: dict[str, Any] = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            e["values"] = draw(st.lists(st.sampled_from(LABEL_VALUES[key]), min_size=1, max_size=2, unique=True))
        t = term(draw(st.sampled_from(TOPOLOGY_KEYS)), expressions=[e])
    scope = draw(st.sampled_from(["own", "list", "all", "prod", "by-name", "list+prod"]))
    if scope in ("list", "list+prod"):
        t["namespaces"] = draw(st.lists(st.sampled_from(NS_CHOICES), min_size=1, max_size=2, unique=True))
    if scope == "all":
        t["namespaceSelector"] = {}
    if scope in ("prod", "list+prod"):
        t["namespaceSelector"] = {"matchLabels": {"env": "prod"}}
    if scope == "by-name":
        t["namespaceSelector"] = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                                        "values": [draw(st.sampled_from(NS_CHOICES))]}]}
    return t


@st.composite
def affinities(draw, p_empty: float = 0.4) -> dict | None:
    if draw(st.integers(0, 9)) < p_empty * 10:
        return None
    small = st.lists(terms(), max_size=2)
    weighted = st.lists(st.tuples(st.integers(1, 100), terms()), max_size=2)
    return affinity(required=draw(small), anti=draw(small), preferred=draw(weighted), preferred_anti=draw(weighted)) or None


@st.composite
def node_objects(draw, name: str) -> dict:
    labels = {}
    if draw(st.integers(0, 5)):
        labels["zone"] = draw(st.sampled_from(["z1", "z2", "z3"]))
    if draw(st.booleans()):
        labels["rack"] = draw(st.sampled_from(["r1", "r2"]))
    return node(name, hostname=draw(st.integers(0, 7)) > 0, **labels)


@st.composite
def clusters(draw) -> dict:
    n = draw(st.integers(1, 6))
    nodes = [draw(node_objects(f"n{i}")) for i in range(n)]
    names = [x["metadata"]["name"] for x in nodes]

    def pods(prefix: str, count: int) -> list[dict]:
        return [pod(f"{prefix}{i}", draw(label_sets()), on=draw(st.sampled_from(names)),
                    namespace=draw(st.sampled_from(NS_CHOICES)), aff=draw(affinities())) for i in range(count)]

    return {
        "nodes": nodes,
        "before": pods("e", draw(st.integers(0, 10))),
        "after": pods("f", draw(st.integers(0, 5))),
        "between": pods("g", 4),  # placed between cycles, once the index watches conditions
        "remove": draw(st.lists(st.integers(0, 14), max_size=4)),
        "relabel": draw(st.one_of(st.none(), node_objects(draw(st.sampled_from(names))))),
        "drop_node": draw(st.one_of(st.none(), st.sampled_from(names))),
        # Two templates, two replicas each, interleaved: a replica meets what the previous
        # one left in the index (and the pods placed since).
        "incoming": [pod(f"p{i}", t["labels"], namespace=t["ns"], aff=t["aff"]) for i, t in enumerate(
            2 * [{"labels": draw(label_sets()), "ns": draw(st.sampled_from(NS_CHOICES)),
                  "aff": draw(affinities(p_empty=0.2))} for _ in range(2)])],
        "placements": [draw(st.sampled_from(names)) for _ in range(4)],
        "args": InterPodAffinityArgs(draw(st.sampled_from([0, 1, 3])), draw(st.booleans())),
        "prod_ns": draw(st.sampled_from(["team-a", "team-b"])),
    }


def _check_against_reference(spec: dict) -> None:
    namespaces = {"team-a": {"env": "dev"}, "team-b": {"env": "dev"}, "default": {}}
    namespaces[spec["prod_ns"]] = {"env": "prod"}
    c = Cluster(spec["nodes"], spec["before"], namespaces, args=spec["args"])
    for raw in spec["after"]:  # the index is built: these arrive incrementally
        c.pods.append(c.add(raw))
    for i in spec["remove"]:
        if i < len(c.pods) and c.pods[i] is not None:
            c.cache.remove_pod(c.pods[i])
            c.pods[i] = None
    reference = Reference(c.cache, spec["args"])
    for i, (raw, target) in enumerate(zip(spec["incoming"], spec["placements"])):
        if i == 1 and spec["relabel"] is not None:  # after the first cycle: cached projections go stale
            c.cache.update_node(parse_node(spec["relabel"]))
        if i == 2 and spec["drop_node"] is not None and len(c.cache.nodes) > 1:
            c.cache.remove_node(spec["drop_node"])
        incoming = parse_pod(raw)
        filtered = run_filter(c, raw)
        assert filtered == reference.filter(incoming)
        names = c.names()
        scored = run_score(c, raw, names)
        assert scored == reference.scores(incoming, names)
        event("filter: skip" if filtered == "Skip" else f"filter: {len({v for v in filtered.values()})} distinct verdicts")
        event("score: skip" if scored == "Skip" else f"score: {len(set(scored[1].values()))} distinct scores")
        if target in c.cache.nodes:  # placed, as the scheduler would: later pods see it through the index
            c.add({**raw, "spec": {**raw["spec"], "nodeName": target}})
        extra = spec["between"][i]
        if extra["spec"]["nodeName"] in c.cache.nodes:
            c.add(extra)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters())
def test_batch_per_node_and_reference_agree_on_random_clusters(spec):
    _check_against_reference(spec)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters())
def test_dense_counts_and_evicted_matchers_give_the_same_answers(spec):
    # Row counts switch from a dict to an array past DENSE_AT rows, and the index keeps
    # at most MAX_MATCHERS watched conditions: force both paths on small clusters.
    saved = RowCounts.DENSE_AT, AffinityIndex.MAX_MATCHERS
    RowCounts.DENSE_AT, AffinityIndex.MAX_MATCHERS = 0, 1
    try:
        _check_against_reference(spec)
    finally:
        RowCounts.DENSE_AT, AffinityIndex.MAX_MATCHERS = saved


def test_churn_of_many_distinct_pods_and_terms():
    # Enough distinct label sets and terms come and go to sweep empty groups and entries.
    nodes = [node(f"n{i}", zone=f"z{i % 3}") for i in range(6)]
    c = Cluster(nodes, namespaces={"team-a": {"env": "prod"}})
    placed = []
    for i in range(700):
        guard = affinity(anti=[term(ZONE, {"app": f"v{i % 5}"})], preferred=[(1 + i % 7, term(HOST, {"id": str(i)}))])
        placed.append(c.add(pod(f"x{i}", {"id": str(i), "app": f"v{i % 5}"}, on=f"n{i % 6}", aff=guard)))
        if i >= 3:
            c.cache.remove_pod(placed[i - 3])
    assert c.plugin.index.stats()["groups"] < 300 and c.plugin.index.stats()["term_entries"] < 600
    reference = Reference(c.cache, InterPodAffinityArgs())
    for raw in [pod("p", {"app": "v3", "id": "698"}, aff=affinity(required=[term(ZONE, {"app": "v4"})])),
                pod("q", {"app": "v1"}, aff=affinity(preferred=[(3, term(HOST, {"app": "v3"}))]))]:
        assert run_filter(c, raw) == reference.filter(parse_pod(raw))
        assert run_score(c, raw) == reference.scores(parse_pod(raw), c.names())
