"""The tutorial's plugins (examples/tutorial): the contract suite, their args, and what they
do in a simulated cluster (Permit pairs, queueing hints)."""

from __future__ import annotations

import pytest

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import ClusterSnapshot
from kubesched.framework import ArgsError, PluginSpec
from kubesched.framework.config import SchedulerConfig, parse_config
from kubesched.framework.loader import load_plugins
from kubesched.framework.registry import Registry
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import assert_plugin_contract, random_clusters

from ..helpers import node, pod
from .tutorial import MODULES, module

POOL = "tutorial.kubesched.io/pool"
PAIR = "tutorial.kubesched.io/pair"

CLUSTERS = random_clusters(
    30,
    seed=3,
    node_labels={POOL: ["gpu", "batch"]},
    pod_labels={POOL: ["gpu", "batch", "nowhere"], PAIR: ["x", "y"]},
)

# module -> the extension points a config enables the plugin at
POINTS = {
    "fewest_pods": ["score"],
    "node_pool": ["filter"],
    "node_pool_batch": ["filter"],
    "wait_for_sibling": ["reserve", "permit"],
    "prefer_label": ["score"],
}


def spec(name: str) -> PluginSpec[object]:
    found: PluginSpec[object] = module(name).spec
    return found


@pytest.mark.parametrize("name", MODULES)
def test_tutorial_plugin_meets_the_contract(name: str) -> None:
    report = assert_plugin_contract(spec(name), None, POINTS[name], CLUSTERS)
    if name == "node_pool_batch":
        assert report.filter_rows_compared > 200 and report.filter_rows_rejected > 50, report
        assert report.hints_called > 0, report
    if name == "prefer_label":
        assert report.score_rows_compared > 200, report
    if name == "wait_for_sibling":
        assert report.unreserve_calls > 100, report


def test_prefer_label_with_args_meets_the_contract() -> None:
    report = assert_plugin_contract(spec("prefer_label"), {"key": "disk", "values": ["ssd", "nvme"], "score": 40},
                                    ["score"], CLUSTERS)
    assert report.score_values == {0, 40}


def test_every_tutorial_module_exports_a_spec_named_like_its_plugin() -> None:
    loaded = load_plugins(Registry(), [f"{name}:spec" for name in MODULES if name != "node_pool"],
                          use_entry_points=False)
    assert sorted(loaded.names()) == ["FewestPods", "NodePool", "PreferLabel", "WaitForSibling"]


# -- args ---------------------------------------------------------------------------------
def test_prefer_label_args_defaults_and_values() -> None:
    args_type = module("prefer_label").PreferLabelArgs
    assert spec("prefer_label").decode(None) == args_type()
    assert spec("prefer_label").decode({"key": "disk", "values": ["ssd"]}) == args_type("disk", ["ssd"], 100)


@pytest.mark.parametrize(("raw", "message"), [
    ({"scores": 10}, 'scores: unknown field "scores"'),
    ({"values": "ssd"}, "values: must be a list, got string"),
    ({"score": "high"}, 'score: must be an integer, got "high"'),
    ({"score": 120}, "score: must be between 0 and 100, got 120"),
    ({"key": ""}, "key: must not be empty"),
])
def test_prefer_label_args_are_decoded_strictly(raw: object, message: str) -> None:
    with pytest.raises(ArgsError) as err:
        spec("prefer_label").decode(raw)
    assert str(err.value) == message


# -- in a simulated cluster ---------------------------------------------------------------
def tutorial_setup(*names: str) -> tuple[Registry, SchedulerConfig]:
    """The in-tree plugins plus the tutorial modules ``names``, all enabled through multiPoint."""
    registry = load_plugins(in_tree_registry(), [f"{n}:spec" for n in names], use_entry_points=False)
    enabled = [{"name": spec(n).name} for n in names]
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": enabled}}}]}
    return registry, parse_config(raw, registry)


def simulation(names: tuple[str, ...], nodes: list[dict[str, object]], pods: list[dict[str, object]]) -> Simulation:
    registry, config = tutorial_setup(*names)
    snap = ClusterSnapshot()
    snap.nodes = [parse_node(n) for n in nodes]
    snap.pending_pods = [parse_pod(p) for p in pods]
    snap.namespaces = {"default": {"kubernetes.io/metadata.name": "default"}}
    return Simulation(snap, config, registry, tie_break="name")


def test_siblings_bind_together_and_a_lone_pod_times_out() -> None:
    sim = simulation(("wait_for_sibling",), [node("n0"), node("n1")], [
        pod("a1", labels={PAIR: "x"}), pod("lone", labels={PAIR: "y"}), pod("plain"), pod("a2", labels={PAIR: "x"}),
    ])
    result = sim.run()
    placed = {o.pod: o.node for o in result.outcomes.values()}
    assert placed["default/a1"] and placed["default/a2"] and placed["default/plain"]
    assert placed["default/lone"] is None
    # a1 waited for a2, so a2 was bound first (its Permit allowed a1, then a1's binding ran)
    order = [key for key, _ in result.placements]
    assert order.index("default/plain") < order.index("default/a1")
    _, message = sim.cluster.conditions["default/lone"]
    assert "timeout" in message and "WaitForSibling" in message
    assert result.virtual_seconds == module("wait_for_sibling").WAIT_SECONDS


def test_a_sibling_wakes_the_pod_whose_wait_timed_out() -> None:
    """a1 waits alone and times out (back to the queue, parked by Unreserve); a2 is
    rejected by NodePool until a node joins its pool. When the NodePool hint requeues a2,
    a2 waits at Permit and activates a1, which then allows a2: both bind."""
    sim = simulation(("node_pool_batch", "wait_for_sibling"), [node("n0"), node("n1")], [
        pod("a1", labels={PAIR: "x"}), pod("a2", labels={PAIR: "x", POOL: "gpu"}),
    ])
    first = sim.run()
    assert {o.pod: o.node for o in first.outcomes.values()} == {"default/a1": None, "default/a2": None}
    scheduler = sim.scheduler
    old = scheduler.cache.nodes["n1"].node
    scheduler.on_node_update(old, parse_node(node("n1", labels={POOL: "gpu"})))
    assert scheduler.queue.counts()["backoffQ"] + scheduler.queue.counts()["activeQ"] == 1  # the hint said QUEUE
    for _ in range(10):  # a2's backoff, then a2 and a1
        sim.clock.advance(1.0)
        scheduler.queue.run_due_flushes()
        while scheduler.schedule_one():
            pass
    bound = {p.key: n for p, n in sim.cluster.bindings}
    assert bound == {"default/a1": "n0", "default/a2": "n1"}


def test_node_pool_hint_ignores_nodes_outside_the_pool() -> None:
    sim = simulation(("node_pool_batch",), [node("n0")], [pod("p", labels={POOL: "gpu"})])
    sim.run()
    scheduler = sim.scheduler
    scheduler.on_node_add(parse_node(node("n1", labels={POOL: "batch"})))
    assert scheduler.queue.counts()["unschedulablePods"] == 1  # SKIP: not the pod's pool
    scheduler.on_node_add(parse_node(node("n2", labels={POOL: "gpu"})))
    assert scheduler.queue.counts()["unschedulablePods"] == 0  # QUEUE


def test_per_node_and_batch_node_pool_place_pods_alike() -> None:
    nodes = [node(f"n{i}", labels={POOL: ["gpu", "batch"][i % 2]} if i % 3 else {}) for i in range(9)]
    pods = [pod(f"p{i}", labels={POOL: ["gpu", "batch", "none"][i % 3]} if i % 2 else {}) for i in range(12)]
    runs = []
    for name in ("node_pool", "node_pool_batch"):
        result = simulation((name, "fewest_pods"), nodes, pods).run()
        runs.append({o.pod: o.node for o in result.outcomes.values()})
    assert runs[0] == runs[1]
    assert sum(1 for n in runs[0].values() if n is None) == 2  # the two pods of pool "none"
