"""The scale-up what-if on hand-built clusters whose answers are worked out by hand: how many
nodes of which pool, which pods they help, and which pods no pool helps and why."""

from __future__ import annotations

from kubesched.planning.expanders import parse_priorities
from kubesched.planning.scale_up import ScaleUpSpec, plan_scale_up
from kubesched.planning.scale_up_settings import PoolSettings
from tests.helpers import pod, taint, toleration
from tests.planning.scale_up_clusters import CONFIG, POOL, REGISTRY, daemon_pod, plan, pool_node, replicas, run, snapshot


def full(pool: str, name: str, cpu: str = "4", memory: str = "16Gi", **kwargs: object) -> list[dict]:
    """A node of ``pool`` with a pod taking all its cpu, so that nothing pending fits it."""
    return [pool_node(name, pool, cpu=cpu, memory=memory, **kwargs),  # type: ignore[arg-type]
            pod(f"filler-{name}", cpu=cpu, memory="1Gi", node_name=name)]


def test_three_pods_needing_three_cpu_each_take_three_four_cpu_nodes():
    scale = plan(*full("small", "s1"), *replicas("web", 3, cpu="3"))
    assert scale.answer is not None
    assert (scale.answer.pool, scale.answer.node_count) == ("small", 3)
    assert scale.answer.helped == ["default/web-0", "default/web-1", "default/web-2"]
    assert scale.answer.estimated_nodes == 3


def test_daemonset_pods_of_the_example_node_take_room_on_every_new_node():
    # 4 cpu less a 2-cpu DaemonSet pod: one 1.5-cpu pod per new node, not two.
    items = [*full("small", "s1"), daemon_pod("s1", cpu="2"), *replicas("web", 4, cpu="1500m")]
    scale = plan(*items)
    assert scale.answer is not None and scale.answer.node_count == 4


def test_pods_are_packed_two_to_a_node_when_they_fit():
    scale = plan(*full("small", "s1"), *replicas("web", 5, cpu="2"))
    assert scale.answer is not None
    assert (scale.answer.estimated_nodes, scale.answer.node_count, len(scale.answer.helped)) == (3, 3, 5)


def test_least_waste_chooses_the_pool_the_pods_fill_best():
    # 3 pods of 3 cpu / 1Gi: small (4 cpu, 16Gi) needs 3 nodes, wasting 3/12 cpu and 45/48 memory (1.1875);
    # big (16 cpu, 16Gi) needs 1, wasting 7/16 cpu and 13/16 memory (1.25).
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), *replicas("web", 3, cpu="3")]
    scale = plan(*items)
    assert scale.choice is not None and scale.choice.decided_by == "least-waste"
    assert scale.answer is not None and (scale.answer.pool, scale.answer.node_count) == ("small", 3)
    by_pool = {p.pool: p for p in scale.pools}
    assert by_pool["big"].estimate is not None and by_pool["big"].estimate.node_count == 1


def test_most_pods_chooses_the_pool_that_helps_more_pods():
    # web fits both pools, db (10 cpu) only the big one.
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), *replicas("web", 2, cpu="1"),
             *replicas("db", 1, cpu="10")]
    scale = plan(*items, spec=ScaleUpSpec(expanders=("most-pods",)))
    assert scale.answer is not None
    assert scale.answer.pool == "big"
    assert sorted(scale.answer.helped) == ["default/db-0", "default/web-0", "default/web-1"]


def test_the_priority_expander_prefers_the_highest_priority_matching_pool():
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), *replicas("web", 3, cpu="3")]
    priorities = parse_priorities({10: ["small"], 50: ["^b.g$"]}, "test")
    scale = plan(*items, spec=ScaleUpSpec(expanders=("priority",), priorities=priorities))
    assert scale.answer is not None and (scale.answer.pool, scale.answer.node_count) == ("big", 1)


def test_the_price_expander_takes_the_lowest_price_per_pod():
    # small: 3 nodes at 1 for 3 pods (1 per pod); big: 1 node at 5 for 3 pods (5/3 per pod).
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), *replicas("web", 3, cpu="3")]
    settings = {"small": PoolSettings(price=1.0), "big": PoolSettings(price=5.0)}
    scale = plan(*items, spec=ScaleUpSpec(expanders=("price",), settings=settings))
    assert scale.answer is not None and scale.answer.pool == "small"


def test_a_pod_no_template_takes_is_reported_with_the_schedulers_message_over_the_templates():
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), *replicas("huge", 1, cpu="32")]
    scale = plan(*items)
    assert scale.answer is None
    assert scale.no_pool == [("default/huge-0", "0/2 nodes are available: 2 Insufficient cpu.")]


def test_a_tainted_pool_helps_only_pods_that_tolerate_it():
    gpu_taint = taint("nvidia.com/gpu", "present")
    items = [*full("general", "g1"), *full("gpu", "p1", cpu="8", taints=[gpu_taint]),
             *replicas("web", 1, cpu="6"), *replicas("train", 1, cpu="6", tolerations=[toleration("nvidia.com/gpu", operator="Exists")])]
    scale = plan(*items)
    assert scale.answer is not None and scale.answer.pool == "gpu"
    assert scale.answer.helped == ["default/train-0"]
    assert dict(scale.no_pool)["default/web-0"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).")


def test_a_node_selector_on_the_pool_label_picks_that_pool_even_if_another_wastes_less():
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"),
             *replicas("web", 1, cpu="3", node_selector={POOL: "big"})]
    scale = plan(*items)
    assert scale.answer is not None and scale.answer.pool == "big"
    assert {p.pool: p.skipped for p in scale.pools}["small"] == "its template node takes none of the pending pods"


def test_hostname_anti_affinity_puts_one_replica_on_each_new_node():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "zk"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    scale = plan(*full("small", "s1"), *replicas("zk", 3, cpu="100m", affinity=anti))
    assert scale.answer is not None and scale.answer.node_count == 3


def test_max_nodes_caps_a_pool_and_the_pods_beyond_it_are_not_helped():
    scale = plan(*full("small", "s1"), *replicas("web", 5, cpu="3"), spec=ScaleUpSpec(max_nodes=2))
    assert scale.answer is not None
    assert (scale.answer.node_count, len(scale.answer.helped)) == (2, 2)
    small = scale.pools[0]
    assert small.estimate is not None and small.estimate.limited


def test_a_pool_at_its_maximum_size_offers_nothing():
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), *replicas("web", 3, cpu="3")]
    scale = plan(*items, spec=ScaleUpSpec(settings={"small": PoolSettings(max_size=1)}))
    by_pool = {p.pool: p for p in scale.pools}
    assert by_pool["small"].skipped == "at its maximum size"
    assert scale.answer is not None and scale.answer.pool == "big"


def test_pods_that_fit_the_cluster_as_it_is_are_not_counted():
    items = [pool_node("s1", "small", cpu="8"), *replicas("web", 2, cpu="3"), *replicas("big", 1, cpu="3", start=10)]
    scale = plan(*items)
    assert scale.pending == ["default/big-10"]
    assert scale.answer is not None and scale.answer.helped == ["default/big-10"]


def test_the_check_adds_nodes_when_the_schedulers_spreading_leaves_the_estimate_short():
    # In queue order three 2-cpu pods, then one 4-cpu pod. The estimate packs the large pod
    # first (decreasing order): 4 | 2+2 | 2 = 3 nodes. The scheduler spreads the 2-cpu pods
    # over the three empty nodes (LeastAllocated), leaving no node for the 4-cpu one: 4 nodes.
    items = [*full("small", "s1"), *replicas("web", 3, cpu="2"), *replicas("db", 1, cpu="4", start=10)]
    scale = plan(*items)
    assert scale.answer is not None
    assert (scale.answer.estimated_nodes, scale.answer.node_count) == (3, 4)
    assert len(scale.answer.helped) == 4
    assert (3, 3) in scale.answer.probes and (4, 4) in scale.answer.probes


def test_the_template_comes_from_a_node_fit_to_be_an_example():
    items = [*full("small", "s1", unschedulable=True, taints=[taint("dedicated", "x")]),
             *full("small", "s2"), *replicas("web", 1, cpu="3")]
    scale = plan(*items)
    small = scale.pools[0]
    assert (small.example, small.good_example) == ("s2", True)
    assert scale.answer is not None and scale.answer.node_count == 1


def test_pods_only_other_pools_would_help_are_listed_with_them():
    # db fits only big; least-waste still prefers small for the web pods.
    items = [*full("small", "s1"), *full("big", "b1", cpu="16", memory="16Gi"),
             *replicas("web", 3, cpu="3"), *replicas("db", 1, cpu="12", start=5)]
    scale = plan(*items)
    assert scale.answer is not None and scale.answer.pool == "small"
    assert scale.elsewhere == [("default/db-5", ["big"])]


def test_estimating_leaves_the_simulated_cluster_as_it_was():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "zk"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    items = [*full("small", "s1"), *full("big", "b1", cpu="16"), daemon_pod("s1"), *replicas("web", 4, cpu="3"),
             *replicas("zk", 3, cpu="100m", affinity=anti)]
    sim, result = run(snapshot(*items))
    cache = sim.scheduler.cache

    def state() -> tuple:
        table = cache.table
        rows = table.order.tolist()
        return (sorted(cache.node_names()), cache.pod_count, sorted(p.uid for p in cache.pods()),
                [(table.names[r], int(table.req_cpu[r]), int(table.pod_count[r])) for r in rows])

    before = state()
    first = plan_scale_up(sim, result, CONFIG, REGISTRY, ScaleUpSpec(), "name", 0)
    assert state() == before
    again = plan_scale_up(sim, result, CONFIG, REGISTRY, ScaleUpSpec(), "name", 0)
    assert [(p.pool, p.estimate.node_count if p.estimate else None) for p in again.pools] == \
        [(p.pool, p.estimate.node_count if p.estimate else None) for p in first.pools]
