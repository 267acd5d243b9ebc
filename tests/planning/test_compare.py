"""`run_compare`: the same pending pods under several configurations, side by side."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from kubesched.planning import CompareSpec, PlanningError, run_compare
from tests.helpers import node, pod, taint
from tests.planning.clusters import copies, simulate_placements, small_pod, write

DATA = Path(__file__).parent / "data"
MOST_ALLOCATED = str(DATA / "most-allocated.yaml")
NO_TAINT_FILTER = str(DATA / "no-taint-filter.yaml")


def _empty_cluster(tmp_path: Path, pods: int = 4) -> str:
    """Four equal, empty nodes and ``pods`` small pending pods: room for all on any one node."""
    nodes = [node(f"n{i}", cpu="8", memory="32Gi") for i in range(4)]
    return write(tmp_path / "cluster.yaml", *nodes, *copies(small_pod("web", cpu="1", memory="1Gi"), pods, "web"))


def test_most_allocated_packs_where_least_allocated_spreads(tmp_path: Path) -> None:
    result = run_compare(CompareSpec(_empty_cluster(tmp_path), ("default", MOST_ALLOCATED), seed=3))
    spread, packed = result.configs
    assert (spread.scheduled, packed.scheduled) == (4, 4)
    assert spread.nodes_with_new_pods == 4
    assert packed.nodes_with_new_pods == 1
    assert (spread.nodes_used, packed.nodes_used) == (4, 1)
    cpu_spread, cpu_packed = spread.resource("cpu"), packed.resource("cpu")
    assert cpu_spread is not None and cpu_packed is not None
    assert cpu_spread.share == cpu_packed.share == 4 / 32  # the same pods: the same total
    assert cpu_packed.max == 0.5 and cpu_spread.max == 0.125  # but not the same peaks
    assert sorted(cpu_packed.node_shares) == [0.0, 0.0, 0.0, 0.5]


def test_pods_placed_differently_are_listed_and_counted(tmp_path: Path) -> None:
    result = run_compare(CompareSpec(_empty_cluster(tmp_path), ("default", MOST_ALLOCATED), seed=3))
    spread, packed = result.configs
    moved = [pod for pod, node in spread.placements.items() if node != packed.placements[pod]]
    assert moved
    assert [change.pod for change in result.pods] == moved
    assert all(change.nodes == [spread.placements[change.pod], packed.placements[change.pod]] for change in result.pods)
    counts = result.changes[0]
    assert (counts.moved, counts.same) == (len(moved), 4 - len(moved))
    assert counts.became_schedulable == counts.became_unschedulable == 0


def test_the_same_config_twice_changes_nothing_and_matches_simulate(tmp_path: Path) -> None:
    snapshot = _empty_cluster(tmp_path)
    result = run_compare(CompareSpec(snapshot, ("default", "default"), seed=11))
    assert result.pods == []
    assert result.labels == ["default", "default (2)"]
    assert result.configs[0].placements == simulate_placements(snapshot, seed=11, tie_break="random")


def test_a_config_that_lets_pods_onto_tainted_nodes_makes_them_schedulable(tmp_path: Path) -> None:
    snapshot = write(tmp_path / "cluster.yaml", node("only", cpu="8", taints=[taint("dedicated", "db")]),
                     small_pod("web"))
    forward = run_compare(CompareSpec(snapshot, ("default", NO_TAINT_FILTER)))
    assert forward.changes[0].became_schedulable == 1
    assert forward.configs[0].unschedulable_reasons[0].message.startswith("0/1 nodes are available: 1 node(s) had untolerated taint(s).")
    backward = run_compare(CompareSpec(snapshot, (NO_TAINT_FILTER, "default")))
    assert backward.changes[0].became_unschedulable == 1
    assert [c.nodes for c in backward.pods] == [["only", None]]


def test_fragmentation_is_the_free_share_where_the_common_shape_no_longer_fits(tmp_path: Path) -> None:
    # a: 4 cpu, 3 taken: 1 free. b: 4 cpu free, then the pending 2-cpu pod leaves 2.
    # The shape (2 cpu) fits b only: 1 of the 3 free cpu is stranded.
    snapshot = write(tmp_path / "cluster.yaml", node("a", cpu="4", memory="8Gi"), node("b", cpu="4", memory="8Gi"),
                     pod("running", cpu="3", memory="1Gi", node_name="a"), small_pod("new", cpu="2", memory="1Gi"))
    run = run_compare(CompareSpec(snapshot, ("default", "default"))).configs[0]
    frag = run.fragmentation
    assert frag.shape == {"cpu": 2000, "memory": 2**30}
    assert (frag.shape_pods, frag.nodes_fitting, frag.room) == (1, 1, 1)
    assert frag.stranded["cpu"] == pytest.approx(1 / 3)
    assert frag.stranded["memory"] == pytest.approx(7 / 14)  # a: 7Gi free, b: 7Gi free


def test_utilisation_covers_extended_resources(tmp_path: Path) -> None:
    gpu = "nvidia.com/gpu"
    snapshot = write(tmp_path / "cluster.yaml", node("g1", cpu="8", extended={gpu: 4}), node("g2", cpu="8", extended={gpu: 4}),
                     node("cpu-only", cpu="8"), small_pod("train", requests={"cpu": "1", gpu: "3"}))
    run = run_compare(CompareSpec(snapshot, ("default", MOST_ALLOCATED))).configs[0]
    usage = run.resource(gpu)
    assert usage is not None
    assert (usage.requested, usage.allocatable) == (3, 8)
    assert sorted(usage.node_shares) == [0.0, 0.75]  # nodes without the resource are left out


def test_fewer_than_two_configs_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PlanningError):
        run_compare(CompareSpec(_empty_cluster(tmp_path), ("default",)))


def test_specs_and_results_pickle(tmp_path: Path) -> None:
    spec = CompareSpec(_empty_cluster(tmp_path), ("default", MOST_ALLOCATED), seed=5)
    assert pickle.loads(pickle.dumps(spec)) == spec
    result = run_compare(spec)
    again = pickle.loads(pickle.dumps(result))
    assert again.configs[1].placements == result.configs[1].placements
    assert again.changes == result.changes
