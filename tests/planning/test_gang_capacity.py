"""`run_capacity` on pod-group shapes: how many more whole groups fit, placed by the real
scheduler's pod-group cycle (all or nothing for a gang, one topology domain per group).

Counts are checked against an independent path: a snapshot holding that many copies of
the group and a few more, pending at once, scheduled by `simulate`'s Simulation: exactly
the counted groups end with every pod bound, on the same nodes."""

from __future__ import annotations

import collections
import copy
import pickle
from pathlib import Path
from typing import Any, Callable

import pytest

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import load_snapshot
from kubesched.planning import LIMIT_REACHED, UNSCHEDULABLE, CapacitySpec, PlanningError, run_capacity
from kubesched.planning.inputs import load_config_file, load_registry
from tests.helpers import node, pod
from tests.planning.clusters import write

RACK = "topology.kubernetes.io/rack"
GATES = ("GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true",)


def pod_group(name: str, min_count: int | None, rack: bool = False, namespace: str = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"gang": {"minCount": min_count}} if min_count else {"basic": {}}}
    if rack:
        spec["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def job(name: str, parallelism: int | None, cpu: str, group: str | None = None) -> dict[str, Any]:
    template = pod("x", cpu=cpu, memory="1Gi")
    spec: dict[str, Any] = {"template": {"metadata": {"labels": {"app": name}}, "spec": template["spec"]}}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if group is not None:
        spec["template"]["spec"]["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def racks(count: int, per_rack: int = 2, cpu: str = "8") -> list[dict[str, Any]]:
    return [node(f"r{r}-n{i}", cpu=cpu, memory="64Gi", labels={RACK: f"rack-{r}"})
            for r in range(count) for i in range(per_rack)]


# scenario -> (nodes, shape objects, size of a group, a group's member pod)
def _rack_gang() -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    # Each rack's two 8-CPU nodes hold two 3-CPU pods each: one gang of 4 per rack.
    return racks(3), [pod_group("train", 4, rack=True), job("train", 4, "3")], 4


def _unconstrained_gang() -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    # Three 8-CPU nodes hold twelve 2-CPU pods: two gangs of 5, not a third.
    return [node(f"n{i}", cpu="8", memory="64Gi") for i in range(3)], [pod_group("g", 5), job("g", 5, "2")], 5


def _basic_group() -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    # Two 8-CPU nodes hold four 3-CPU pods: one group of 3 whole, the next only in part.
    return [node(f"n{i}", cpu="8", memory="64Gi") for i in range(2)], [pod_group("b", None), job("b", 3, "3")], 3


def _group_and_a_pod() -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    # A PodGroup and one Pod: a gang of minCount (2) copies of the Pod.
    return [node(f"n{i}", cpu="4", memory="64Gi") for i in range(3)], [pod_group("p", 2), pod("worker", cpu="3", memory="1Gi")], 2


SCENARIOS: dict[str, Callable[[], tuple[list[dict[str, Any]], list[dict[str, Any]], int]]] = {
    "a gang in one rack": _rack_gang, "a gang anywhere": _unconstrained_gang, "a basic group": _basic_group,
    "a PodGroup and a Pod": _group_and_a_pod,
}


def _pending_copies(shape: list[dict[str, Any]], size: int, count: int) -> list[dict[str, Any]]:
    """``count`` groups of the shape, each with ``size`` pending pods, created in order."""
    group = next(o for o in shape if o["kind"] == "PodGroup")
    source = next(o for o in shape if o["kind"] != "PodGroup")
    spec = source["spec"] if source["kind"] == "Pod" else source["spec"]["template"]["spec"]
    out: list[dict[str, Any]] = []
    for c in range(count):
        name = f"copy{c}"
        g = copy.deepcopy(group)
        g["metadata"]["name"] = name
        out.append(g)
        for i in range(size):
            member = pod(f"{name}-{i}", uid=f"uid-{name}-{i}", created=f"2024-01-01T00:{c:02d}:{i:02d}Z")
            member["spec"] = {**copy.deepcopy(spec), "schedulingGroup": {"podGroupName": name}}
            out.append(member)
    return out


def _whole_groups(snapshot_path: str, size: int) -> tuple[int, dict[str, int]]:
    """The independent path: groups with every pod bound, and their pods per node."""
    registry = load_registry((), GATES)
    snapshot = load_snapshot(snapshot_path, frozenset(kind for _, kind in registry.object_kinds()))
    result = Simulation(snapshot, load_config_file("default", registry), registry, tie_break="name").run()
    by_group: dict[str, list[str | None]] = collections.defaultdict(list)
    for key, outcome in result.outcomes.items():
        by_group[key.split("/")[1].rsplit("-", 1)[0]].append(outcome.node)
    whole = [nodes for nodes in by_group.values() if len(nodes) == size and all(nodes)]
    return len(whole), dict(collections.Counter(n for nodes in whole for n in nodes if n))


def _count(tmp_path: Path, nodes: list[dict[str, Any]], shape: list[dict[str, Any]], *more: str, **spec: Any):
    snapshot = write(tmp_path / "cluster.yaml", *nodes)
    shape_file = write(tmp_path / "shape.yaml", *shape)
    return run_capacity(CapacitySpec(snapshot, (shape_file, *more), tie_break="name", feature_gates=GATES, **spec))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_count_and_placement_match_simulating_that_many_pending_groups(tmp_path: Path, scenario: str) -> None:
    nodes, shape, size = SCENARIOS[scenario]()
    counted = _count(tmp_path, nodes, shape).gangs[0]
    copied = write(tmp_path / "copies.yaml", *nodes, *_pending_copies(shape, size, counted.groups + 3))
    whole, per_node = _whole_groups(copied, size)
    assert counted.groups > 0 and counted.pods_per_group == size
    assert counted.groups == whole
    assert counted.per_node == dict(sorted(per_node.items(), key=lambda kv: (-kv[1], kv[0])))
    assert counted.termination.type == UNSCHEDULABLE


def test_constrained_groups_are_counted_per_domain(tmp_path: Path) -> None:
    nodes, shape, _ = _rack_gang()
    counted = _count(tmp_path, nodes, shape).gangs[0]
    assert counted.groups == 3 and counted.per_domain == {"rack-0": 1, "rack-1": 1, "rack-2": 1}


def test_the_next_group_says_why_each_placement_was_infeasible(tmp_path: Path) -> None:
    nodes, shape, _ = _rack_gang()
    counted = _count(tmp_path, nodes, shape).gangs[0]
    assert counted.termination.message.startswith("0/3 placements are available")
    assert [(p.name, p.nodes, p.feasible) for p in counted.placements] == [
        ("rack-0", 2, False), ("rack-1", 2, False), ("rack-2", 2, False)]
    for p in counted.placements:  # 2 CPUs left per node: no 3-CPU pod fits
        assert p.reason.startswith("0/4 pod(s) fit; the first that did not: default/train-3-")
        assert "0/2 nodes are available: 2 Insufficient cpu." in p.reason


def test_an_unconstrained_gang_that_does_not_fit_gives_its_pods_message(tmp_path: Path) -> None:
    nodes, shape, _ = _unconstrained_gang()
    counted = _count(tmp_path, nodes, shape).gangs[0]
    assert counted.placements == [] or not any(p.feasible for p in counted.placements)
    assert counted.pod_message.startswith("0/3 nodes are available: 3 Insufficient cpu.")
    assert counted.withdrawn_bound == 0  # a gang binds nothing when it does not fit whole


def test_a_basic_group_bound_in_part_is_withdrawn_whole(tmp_path: Path) -> None:
    nodes, shape, _ = _basic_group()
    result = _count(tmp_path, nodes, shape, max_replicas=None)
    counted = result.gangs[0]
    assert counted.groups == 1 and counted.withdrawn_bound == 1
    assert sum(counted.per_node.values()) == 3  # the first group's pods only


def test_a_pod_group_and_a_pod_make_min_count_copies_of_the_pod(tmp_path: Path) -> None:
    nodes, shape, _ = _group_and_a_pod()
    counted = _count(tmp_path, nodes, shape).gangs[0]
    assert counted.pods_per_group == 2 and [(m.title, m.count) for m in counted.members] == [("Pod default/worker", 2)]


def test_a_pod_group_with_pods_of_several_templates(tmp_path: Path) -> None:
    # one leader (4 CPU) and three workers (2 CPU) per gang, on two 8-CPU nodes: one gang (10 CPU), not two
    nodes = [node(f"n{i}", cpu="8", memory="64Gi") for i in range(2)]
    shape = [pod_group("lw", 4), pod("leader", cpu="4", memory="1Gi"), job("workers", 3, "2")]
    counted = _count(tmp_path, nodes, shape).gangs[0]
    assert [(m.title, m.count) for m in counted.members] == [("Pod default/leader", 1), ("Job default/workers", 3)]
    assert counted.groups == 1 and sum(counted.per_node.values()) == 4


def test_max_replicas_bounds_the_groups(tmp_path: Path) -> None:
    nodes, shape, _ = _rack_gang()
    counted = _count(tmp_path, nodes, shape, max_replicas=2).gangs[0]
    assert counted.groups == 2 and counted.termination.type == LIMIT_REACHED


def test_groups_and_replicas_are_counted_round_robin(tmp_path: Path) -> None:
    nodes, shape, _ = _rack_gang()
    small = write(tmp_path / "small.yaml", pod("small", cpu="2", memory="1Gi"))
    result = _count(tmp_path, nodes, shape, small)
    # a gang takes 6 of 8 CPUs on both nodes of a rack, a replica 2 of another node's: each
    # node ends with two gang pods and one replica, every CPU taken
    assert result.groups == 3 and result.replicas == 6
    assert set(result.gangs[0].per_node.values()) == {2} and set(result.specs[0].per_node.values()) == {1}
    assert result.gangs[0].termination.type == UNSCHEDULABLE and result.specs[0].termination.type == UNSCHEDULABLE


def test_copies_are_named_apart_from_the_snapshot_s_groups(tmp_path: Path) -> None:
    nodes, shape, _ = _rack_gang()
    running = pod_group("train-0", 4)  # a PodGroup of that name exists (no pods)
    snapshot = write(tmp_path / "cluster.yaml", *nodes, running)
    recorded: list[str] = []
    result = run_capacity(CapacitySpec(snapshot, (write(tmp_path / "shape.yaml", *shape),), tie_break="name",
                                       feature_gates=GATES))
    recorded.extend(p.reason for p in result.gangs[0].placements)
    assert all("default/train-4-" in reason for reason in recorded)  # copies 1, 2, 3 fit; 4 did not


def test_results_pickle(tmp_path: Path) -> None:
    nodes, shape, _ = _rack_gang()
    result = _count(tmp_path, nodes, shape)
    assert pickle.loads(pickle.dumps(result)).gangs[0].groups == result.gangs[0].groups


@pytest.mark.parametrize("shape, gates, problem", [
    ([pod_group("g", 2), pod("p", cpu="1")], (), "counting pod groups needs the workload gates"),
    ([pod_group("g", 2), pod_group("h", 2), pod("p", cpu="1")], GATES, "found 2 PodGroups"),
    ([pod_group("g", 2)], GATES, "PodGroup g: give its pods too"),
    ([pod_group("g", 4), job("j", 3, "1")], GATES, "its pods (3) are fewer than minCount 4"),
    ([pod_group("g", 2), job("j", 2, "1", group="other")], GATES,
     "spec.template.spec.schedulingGroup.podGroupName 'other' is not the PodGroup of this file ('g')"),
    ([pod_group("g", 2), {**job("j", 2, "1"), "metadata": {"name": "j", "namespace": "ml"}}], GATES,
     "namespace 'ml' is not the PodGroup's ('default')"),
    ([pod_group("g", 2), job("j", 0, "1")], GATES, "spec.parallelism must be a whole number of pods, 1 or more, got 0"),
    ([{**pod_group("g", 2), "spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}}, pod("p", cpu="1")], GATES,
     "spec.schedulingPolicy.gang.minCount"),
], ids=["gates off", "two groups", "no pods", "too few pods", "another group", "another namespace", "zero parallelism",
        "invalid PodGroup"])
def test_bad_shapes_are_one_line_naming_the_file(tmp_path: Path, shape: list[dict[str, Any]], gates: tuple[str, ...],
                                                  problem: str) -> None:
    snapshot = write(tmp_path / "cluster.yaml", *racks(1))
    shape_file = write(tmp_path / "shape.yaml", *shape)
    with pytest.raises(PlanningError) as err:
        run_capacity(CapacitySpec(snapshot, (shape_file,), feature_gates=gates))
    assert len(err.value.lines) == 1 and err.value.lines[0].startswith(shape_file)
    assert problem in err.value.lines[0]
