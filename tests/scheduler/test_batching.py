"""OpportunisticBatching: when a pod gets the next node of its twin's heap as a hint
(upstream's ``GetNodeHint``/``StoreScheduleResults``), and when it does not."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender_config import ExtenderConfig
from kubesched.objects.pod import parse_pod
from kubesched.scheduler.algorithm import Algorithm
from kubesched.scheduler.batching import HINT_NONE, HINT_USED
from kubesched.scheduler.extender import HTTPExtender
from kubesched.scheduler.metrics import SchedulerMetrics

from ..helpers import Cluster, framework, make_pod, node, only, pod

LIST_DEFAULTING = {"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}


def filled_cluster(n: int = 6) -> Cluster:
    """Nodes of 2 cpus, empty: each pod of 2 cpus fills one, and all score alike."""
    return Cluster([node(f"n{i}", cpu="2") for i in range(n)])


def graded_cluster(n: int = 6) -> Cluster:
    """Nodes of 2 cpus, node i already running i*100m: scores differ, and a pod of 1500m fills any node."""
    return Cluster([node(f"n{i}", cpu="2") for i in range(n)],
                   [pod(f"old{i}", cpu=f"{i * 100}m", node_name=f"n{i}") for i in range(1, n)])


class Run:
    """Pods scheduled one cycle after another, each bound where it goes."""

    def __init__(self, cluster: Cluster, profile: dict | None = LIST_DEFAULTING, cycle: int = 0) -> None:
        self.cluster = cluster
        self.fwk = framework(cluster, profile)
        self.algo = Algorithm()
        self.algo.now = cluster.clock.now
        self.cycle = cycle

    def schedule(self, name: str, cpu: str = "2", skip_cycles: int = 0, **kw: object) -> str:
        self.cycle += 1 + skip_cycles
        result = self.algo.schedule_pod(self.fwk, CycleState(), make_pod(name, cpu=cpu, **kw), self.cluster.snapshot,
                                        self.cycle)
        self.cluster.add_pod(pod(name, cpu=cpu, node_name=result.suggested_host, **kw))
        return result.suggested_host


def test_the_next_twin_takes_the_next_node_of_the_heap_without_a_walk():
    run = Run(filled_cluster())
    run.schedule("a")
    start = run.algo.next_start_node_index
    run.schedule("b")
    walk = run.algo.last_walk
    assert walk.hint == HINT_USED and walk.feasible_found == 1
    assert run.algo.next_start_node_index == start  # a hint does not move the start index


def test_hints_place_pods_where_full_cycles_would_when_scores_differ():
    hinted, full = Run(graded_cluster()), Run(graded_cluster())
    full.algo.batching = False
    placed = [hinted.schedule(f"p{i}", cpu="1500m") for i in range(6)]
    assert placed == [full.schedule(f"p{i}", cpu="1500m") for i in range(6)] == [f"n{i}" for i in range(6)]
    assert hinted.algo.batches["default-scheduler"].batched_pods == 5


def test_equal_scores_are_hinted_in_heap_order():
    # upstream's heap pops equal totals 1st, then 6th, 5th, ... of the walk: so do the hints
    run = Run(filled_cluster())
    assert [run.schedule(f"p{i}") for i in range(6)] == ["n0", "n5", "n4", "n3", "n2", "n1"]


def test_system_default_spreading_signs_no_pod():
    run = Run(filled_cluster(), profile=None)
    run.schedule("a")
    run.schedule("b")
    signature = run.algo.last_walk.signature
    assert run.algo.last_walk.hint == HINT_NONE and signature is not None and signature() is None


def test_a_pod_that_still_fits_the_previous_node_gets_no_hint():
    run = Run(filled_cluster())
    run.schedule("a", cpu="500m")
    run.schedule("b", cpu="500m")  # the node "a" went to could still be the best: rescored
    assert run.algo.last_walk.hint == HINT_NONE


def test_a_different_signature_gets_no_hint():
    run = Run(filled_cluster())
    run.schedule("a")
    run.schedule("b", labels={"app": "other"})  # InterPodAffinity signs labels
    assert run.algo.last_walk.hint == HINT_NONE


def test_a_cycle_in_between_drops_the_state():
    run = Run(filled_cluster())
    run.schedule("a")
    run.schedule("b", skip_cycles=1)  # another pod (failed, or of another profile) came between
    assert run.algo.last_walk.hint == HINT_NONE


def test_the_state_expires_after_500ms_of_the_schedulers_clock():
    run = Run(filled_cluster())
    run.schedule("a")
    run.cluster.clock.advance(0.6)
    run.schedule("b")
    assert run.algo.last_walk.hint == HINT_NONE


def test_pods_with_spread_constraints_are_not_signed():
    fwk = Run(filled_cluster()).fwk
    raw = pod("s", cpu="2")
    assert fwk.sign_pod(parse_pod(raw)) is not None
    raw["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                                 "whenUnsatisfiable": "ScheduleAnyway",
                                                 "labelSelector": {"matchLabels": {"app": "x"}}}]
    assert fwk.sign_pod(parse_pod(raw)) is None


def test_a_plugin_without_sign_pod_turns_signatures_off_for_the_profile():
    cluster = filled_cluster(2)
    with_images = framework(cluster, only("NodeResourcesFit", "ImageLocality"))
    assert with_images.signs_pods and with_images.sign_pod(make_pod("a")) is not None

    class Unsigned:
        name = "NodeResourcesFit"

        def filter(self, *args: object) -> None:
            return None

    with_images._init_signing({"filter": [Unsigned()], "score": with_images.points["score"]})
    assert not with_images.signs_pods and with_images.sign_pod(make_pod("a")) is None


def test_signatures_cover_the_scheduler_name():
    fwk = framework(filled_cluster(1), only("NodeResourcesFit"))
    assert fwk.sign_pod(make_pod("a")) == fwk.sign_pod(make_pod("b"))
    assert fwk.sign_pod(make_pod("a")) != fwk.sign_pod(make_pod("b", scheduler_name="other"))


def test_batching_metrics_count_hints_and_flushes():
    run = Run(filled_cluster())
    metrics = run.algo.metrics = SchedulerMetrics()
    run.schedule("a")
    run.schedule("b")  # hint used
    run.schedule("c", skip_cycles=1)  # state dropped: pod_skipped

    def value(name: str, **labels: str) -> float:
        found = metrics.registry.get_sample_value(name, labels)
        return found or 0.0

    assert value("scheduler_batch_attempts_total", profile="default-scheduler", result="hint_used") == 1
    assert value("scheduler_batch_cache_flushed_total", profile="default-scheduler", reason="pod_skipped") == 1
    assert value("scheduler_get_node_hint_duration_seconds_count", hinted="hint", profile="default-scheduler") == 1
    assert value("scheduler_store_schedule_results_duration_seconds_count", profile="default-scheduler") == 3


def test_with_extenders_ties_are_random_and_no_pod_is_batched():
    # upstream sets nodeScoreHeap's random key only when extenders exist, and turns
    # signatures off for a profile with extenders
    c = filled_cluster(8)
    fwk = framework(c, LIST_DEFAULTING)
    picks = set()
    for seed in range(12):
        algo = Algorithm(seed=seed, extenders=[HTTPExtender(ExtenderConfig("http://extender.invalid"))])
        assert not algo.batching
        picks.add(algo.schedule_pod(fwk, CycleState(), make_pod("p"), c.snapshot).suggested_host)
    assert len(picks) > 1
    assert {Algorithm().schedule_pod(fwk, CycleState(), make_pod("p"), c.snapshot).suggested_host for _ in range(3)} == {"n0"}
