"""DefaultPreemption: upstream's preemption cases that matter, run through the simulator.

Each case is a small cluster and one or more pending pods; what is checked is what
upstream decides (``default_preemption_test.go`` and ``preemption_test.go``): who may
preempt, which nodes are tried, which victims are chosen and reprieved, which node
is picked, the message when preemption cannot help, and what the pods nominated
to a node hold there.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli

from kubesched.cluster.simulated import PodOutcome, Simulation, SimulationResult
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, ConfigError, parse_config
from kubesched.plugins.defaultpreemption import DefaultPreemptionArgs
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.explain import attempt_record
from kubesched.scheduler.metrics import SchedulerMetrics
from kubesched.scheduler.scheduler import Attempt

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
_uid = itertools.count()


def node(name: str, cpu: str = "4", **labels: str) -> dict:
    return {"kind": "Node", "metadata": {"name": name, "labels": {HOST: name, **labels}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def pod(name: str, cpu: str, priority: int = 0, node_name: str = "", started: str = "2024-01-01T00:00:00Z",
        labels: dict[str, str] | None = None, policy: str | None = None, **spec: Any) -> dict:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
                            "priority": priority, **spec}
    if node_name:
        body["nodeName"] = node_name
    if policy:
        body["preemptionPolicy"] = policy
    status = {"startTime": started} if node_name else {}
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{next(_uid)}",
                                        "labels": labels or {"app": name},
                                        "creationTimestamp": f"2024-01-01T00:00:{next(_uid) % 60:02d}Z"},
            "spec": body, "status": status}


def pdb(name: str, labels: dict[str, str], allowed: int) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}}, "status": {"disruptionsAllowed": allowed}}


def simulate(objects: list[dict], config: dict | None = None) -> tuple[SimulationResult, dict[str, dict]]:
    """Run the objects; the result and each pod's first-attempt record."""
    registry = in_tree_registry()
    snapshot = snapshot_from_objects([("t", o) for o in objects], plugin_kinds=frozenset({"PodDisruptionBudget"}))
    cfg = parse_config(config or {"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    records: dict[str, dict] = {}
    sims: list[Simulation] = []

    def on_attempt(attempt: Attempt) -> None:
        if attempt.pod.key not in records:
            records[attempt.pod.key] = attempt_record(attempt, sims[0].scheduler.cache.table.order.tolist())

    sim = Simulation(snapshot, cfg, registry, tie_break="name", on_attempt=on_attempt)
    sims.append(sim)
    return sim.run(), records


def post_filter(records: dict[str, dict], key: str = "default/p") -> dict:
    return records[key]["postFilter"]


# -- who may preempt ---------------------------------------------------------------
def test_a_pod_with_preemption_policy_never_does_not_preempt():
    result, records = simulate([node("n1"), pod("low", "4", 0, "n1"), pod("p", "2", 100, policy="Never")])
    assert post_filter(records)["message"] == "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    assert records["default/p"]["message"].endswith(" no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.")
    assert result.preemptions == [] and result.outcomes["default/p"].node is None


def test_a_higher_priority_pod_evicts_a_lower_priority_one_and_is_placed_there():
    result, records = simulate([node("n1"), pod("low", "3", 0, "n1"), pod("p", "2", 100)])
    pf = post_filter(records)
    assert (pf["code"], pf["nominatedNode"], pf["victims"], pf["message"]) == ("Success", "n1", ["default/low"], "")
    assert records["default/p"]["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert result.preemptions == [("default/low", "default/p", "n1")]
    assert result.outcomes["default/p"].node == "n1"


def test_pods_of_equal_priority_are_never_victims():
    _, records = simulate([node("n1"), pod("same", "3", 100, "n1"), pod("p", "2", 100)])
    assert post_filter(records)["message"] == (
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


# -- which nodes are tried -----------------------------------------------------------
def test_nodes_preemption_cannot_fix_are_not_tried():
    objects = [node("n1", disk="hdd"), pod("low", "3", 0, "n1"), pod("p", "2", 100, nodeSelector={"disk": "ssd"})]
    _, records = simulate(objects)
    assert post_filter(records)["message"] == (
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_a_node_still_too_small_without_its_lower_priority_pods_is_reported_with_its_filter_reason():
    objects = [node("n1", cpu="2"), pod("high", "1", 1000, "n1"), pod("low", "1", 0, "n1"), pod("p", "2", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["message"] == "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Insufficient cpu."


def test_requests_above_a_nodes_allocatable_make_it_unresolvable():
    _, records = simulate([node("n1", cpu="2"), pod("low", "1", 0, "n1"), pod("p", "3", 100)])
    assert records["default/p"]["filtered"]["n1"]["code"] == "UnschedulableAndUnresolvable"
    assert post_filter(records)["message"].endswith("1 Preemption is not helpful for scheduling.")


# -- victims and reprieves -------------------------------------------------------------
def test_only_as_many_victims_as_needed_the_least_important_first():
    objects = [node("n1"), pod("a", "1", 10, "n1"), pod("b", "1", 20, "n1"), pod("c", "1", 30, "n1"),
               pod("d", "1", 40, "n1"), pod("p", "2", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["victims"] == ["default/a", "default/b"]


def test_among_equal_priorities_the_pod_started_last_is_evicted():
    objects = [node("n1", cpu="2"), pod("old", "1", 10, "n1", started="2024-01-01T00:00:00Z"),
               pod("new", "1", 10, "n1", started="2024-01-02T00:00:00Z"), pod("p", "1", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["victims"] == ["default/new"]


def test_victims_whose_eviction_would_violate_a_budget_are_reprieved_first():
    objects = [node("n1", cpu="2"), pod("guarded", "1", 10, "n1", labels={"app": "db"}),
               pod("free", "1", 20, "n1", labels={"app": "web"}), pdb("db", {"app": "db"}, 0), pod("p", "1", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["victims"] == ["default/free"]


def test_a_budget_with_disruptions_left_does_not_protect():
    objects = [node("n1", cpu="2"), pod("guarded", "1", 10, "n1", labels={"app": "db"}),
               pod("free", "1", 20, "n1", labels={"app": "web"}), pdb("db", {"app": "db"}, 1), pod("p", "1", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["victims"] == ["default/guarded"]


# -- choosing the node ------------------------------------------------------------------
def test_the_node_with_fewer_budget_violations_wins_over_lower_priority_victims():
    objects = [node("n1", cpu="1"), node("n2", cpu="1"), pod("db", "1", 0, "n1", labels={"app": "db"}),
               pod("web", "1", 50, "n2"), pdb("db", {"app": "db"}, 0), pod("p", "1", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["nominatedNode"] == "n2"


def test_the_node_whose_most_important_victim_matters_least_wins():
    objects = [node("n1", cpu="1"), node("n2", cpu="1"), pod("x", "1", 50, "n1"), pod("y", "1", 10, "n2"),
               pod("p", "1", 100)]
    _, records = simulate(objects)
    assert (post_filter(records)["nominatedNode"], post_filter(records)["tiedCandidates"]) == ("n2", ["n2"])


def test_then_the_smaller_priority_sum_then_fewer_victims():
    objects = [node("n1", cpu="2"), node("n2", cpu="2"), node("n3", cpu="2"),
               pod("a1", "1", 10, "n1"), pod("a2", "1", 10, "n1"),  # sum 20
               pod("b1", "1", 10, "n2"), pod("b2", "1", 5, "n2"),  # sum 15
               pod("c1", "2", 10, "n3"),  # sum 10, one victim
               pod("p", "2", 100)]
    _, records = simulate(objects)
    assert post_filter(records)["nominatedNode"] == "n3"


def test_ties_on_every_criterion_take_the_latest_start_then_the_smallest_name_with_the_name_tie_break():
    objects = [node("n1", cpu="1"), node("n2", cpu="1"), node("n3", cpu="1"),
               pod("x", "1", 10, "n1", started="2024-01-01T00:00:00Z"),
               pod("y", "1", 10, "n2", started="2024-01-03T00:00:00Z"),
               pod("z", "1", 10, "n3", started="2024-01-03T00:00:00Z"), pod("p", "1", 100)]
    _, records = simulate(objects)
    pf = post_filter(records)
    assert (pf["nominatedNode"], pf["tiedCandidates"]) == ("n2", ["n2", "n3"])


# -- nominated pods ------------------------------------------------------------------------
def test_a_nominated_pod_holds_its_room_against_lower_priority_pods():
    # p preempts low on n1 and is nominated there; q (lower priority than p) must not take that room.
    objects = [node("n1", cpu="2"), pod("low", "2", 0, "n1"), pod("p", "2", 100), pod("q", "2", 50)]
    result, records = simulate(objects)
    assert post_filter(records)["nominatedNode"] == "n1"
    assert records["default/q"]["chosen"] is None
    assert result.outcomes["default/p"].node == "n1"


def test_a_nominated_pod_does_not_hold_room_against_a_more_important_pod():
    registry = in_tree_registry()
    objects = [node("n1", cpu="2"), pod("low", "2", 0, "n1"), pod("p", "2", 100)]
    snapshot = snapshot_from_objects([("t", o) for o in objects])
    sim = Simulation(snapshot, parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY),
                     registry, tie_break="name")
    sim.run(max_attempts=1)  # p preempts low and is nominated to n1
    assert sim.scheduler.nominator.nominated_pods_for_node("n1")[0].key == "default/p"
    late = snapshot_from_objects([("t", pod("q", "2", 500))]).pending_pods[0]
    sim.outcomes[late.key] = PodOutcome(late.key)
    sim.scheduler.on_pod_add(late)
    result = sim.run()
    assert result.placements[0] == ("default/q", "n1")


# -- PreFilter state kept right in the dry run ---------------------------------------------------
def test_a_victim_whose_anti_affinity_repels_the_preemptor_is_evicted():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "p"}}, "topologyKey": HOST}]}}
    objects = [node("n1"), pod("shy", "1", 0, "n1", affinity=anti), pod("p", "1", 100, labels={"app": "p"})]
    _, records = simulate(objects)
    assert records["default/p"]["filtered"]["n1"]["plugin"] == "InterPodAffinity"
    assert post_filter(records)["victims"] == ["default/shy"]


def test_topology_spreading_counts_the_victims_as_gone():
    spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    objects = [node("a", cpu="1", **{ZONE: "a"}), node("b", cpu="4", **{ZONE: "b"}),
               pod("w1", "1", 0, "a", labels={"app": "other"}),
               pod("w2", "0.1", 0, "b", labels={"app": "web"}), pod("w3", "0.1", 0, "b", labels={"app": "web"}),
               pod("p", "1", 100, labels={"app": "web"}, topologySpreadConstraints=spread)]
    _, records = simulate(objects)
    # Zone b has 2 matching pods, zone a none: b is skewed, a is full. Evicting w1 frees a.
    assert records["default/p"]["filtered"]["b"]["plugin"] == "PodTopologySpread"
    assert post_filter(records)["victims"] == ["default/w1"]


# -- args -------------------------------------------------------------------------------------------
def _config(args: dict) -> dict:
    return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "DefaultPreemption", "args": args}]}]}


def test_args_default_to_upstreams_and_bound_the_candidates():
    args = DefaultPreemptionArgs()
    assert (args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute) == (10, 100)
    assert [args.num_candidates(n) for n in (5, 100, 5000)] == [5, 100, 500]


@pytest.mark.parametrize("args, message", [
    ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute"),
])
def test_invalid_args_are_rejected_as_upstream_words_it(args: dict, message: str):
    with pytest.raises(ConfigError) as err:
        parse_config(_config(args), in_tree_registry(), UPSTREAM_ONLY)
    assert message in str(err.value)


def test_the_default_profile_runs_default_preemption_at_post_filter():
    """After DynamicResources, whose PostFilter deallocates an idle claim before any pod is evicted."""
    registry = in_tree_registry()
    cfg = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    sim = Simulation(snapshot_from_objects([]), cfg, registry)
    assert sim.scheduler.profiles["default-scheduler"].plugin_names("postFilter") == ["DynamicResources", "DefaultPreemption"]


# -- PriorityClasses ----------------------------------------------------------------------------------
def test_a_pod_of_a_non_preempting_class_gets_its_value_and_policy_at_admission():
    klass = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "quiet"},
             "value": 1000, "preemptionPolicy": "Never"}
    raw = pod("p", "2")
    del raw["spec"]["priority"]
    raw["spec"]["priorityClassName"] = "quiet"
    result, records = simulate([klass, node("n1"), pod("low", "4", 0, "n1"), raw])
    assert post_filter(records)["message"] == "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."


def test_the_global_default_class_gives_its_value_to_pods_without_a_class():
    klass = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "default"},
             "value": 500, "globalDefault": True}
    raw = pod("p", "2")
    del raw["spec"]["priority"]
    result, records = simulate([klass, node("n1"), pod("low", "4", 0, "n1"), raw])
    assert post_filter(records)["victims"] == ["default/low"]


# -- asynchronous eviction ------------------------------------------------------------------------------
def test_a_preemptor_waits_at_pre_enqueue_while_its_victims_are_evicted_in_the_background():
    registry = in_tree_registry()
    objects = [node("n1", cpu="2"), pod("low", "2", 0, "n1"), pod("p", "2", 100)]
    sim = Simulation(snapshot_from_objects([("t", o) for o in objects]),
                     parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY), registry)
    pending: list = []
    sim.cluster.preempt_pod = lambda victim, preemptor, node, done=None: pending.append(done)  # type: ignore[method-assign]
    sim.run(max_attempts=1)
    plugin = sim.scheduler.profiles["default-scheduler"].plugin("DefaultPreemption")
    preemptor = next(p for p in sim.scheduler.pods.values() if p.name == "p")
    assert len(pending) == 1
    assert plugin.pre_enqueue(preemptor).message == "waiting for the preemption for this pod to be finished"
    pending[0](True)
    assert plugin.pre_enqueue(preemptor) is None


# -- end to end through the command -------------------------------------------------------------------
def test_simulate_explains_the_preemption_and_reports_who_was_preempted_for_whom(tmp_path):
    objects = [node("n1", cpu="2"), pod("low", "2", 0, "n1"), pod("guarded", "1", 0, "n1", labels={"app": "db"}),
               pdb("db", {"app": "db"}, 0), pod("p", "2", 100)]
    objects[1]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(objects))
    result = CliRunner().invoke(cli, ["simulate", str(tmp_path / "cluster.yaml"), "--tie-break", "name",
                                      "--explain", str(tmp_path / "explain.json")])
    assert result.exit_code == 0, result.output
    assert "default/guarded on n1, for default/p" in result.output
    assert "default/low on n1, for default/p" in result.output
    first = json.loads((tmp_path / "explain.json").read_text().splitlines()[0])  # JSON Lines: one attempt a line
    assert first["postFilter"] == {"code": "Success", "message": "", "nominatedNode": "n1",
                                   "victims": ["default/guarded", "default/low"], "tiedCandidates": ["n1"]}


def test_preemption_attempts_and_victims_are_counted_as_upstream_names_them():
    registry = in_tree_registry()
    objects = [node("n1", cpu="2"), pod("a", "1", 0, "n1"), pod("b", "1", 0, "n1"), pod("p", "2", 100),
               pod("never", "2", 100, policy="Never")]
    sim = Simulation(snapshot_from_objects([("t", o) for o in objects]),
                     parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY), registry,
                     tie_break="name")
    sim.scheduler.metrics = SchedulerMetrics()
    sim.run(max_attempts=2)  # p preempts a and b; "never" may not preempt
    text = sim.scheduler.metrics.exposition().decode()
    assert "scheduler_preemption_attempts_total 2.0" in text
    assert "scheduler_preemption_victims_count 1.0" in text and "scheduler_preemption_victims_sum 2.0" in text
