"""The scale-down what-if on hand-built clusters whose answers are worked out by hand: which
nodes cluster-autoscaler's rules remove, in which order, where their pods go, and why the
others stay."""

from __future__ import annotations

from kubesched.planning.scale_down import ScaleDownOptions
from tests.planning.scale_down_clusters import (
    annotated,
    daemonset_pod,
    kept_reasons,
    mirror_pod,
    node,
    pdb,
    plan,
    pod,
)

CA = "cluster-autoscaler.kubernetes.io/"


def busy(name: str, cpu: str = "16") -> list[dict]:
    """A node above the threshold (a filler pod takes 60% of its cpu), with room left."""
    return [node(name, cpu=cpu), pod(f"filler-{name}", cpu=f"{int(cpu) * 600}m", node_name=name, owner="filler")]


def test_an_underutilized_node_whose_pods_fit_elsewhere_is_removed_and_says_where_they_go():
    result = plan(node("n1", cpu="4"), node("n2", cpu="4"),
                  pod("a", cpu="1", node_name="n1", owner="a"), pod("b", cpu="2500m", node_name="n2", owner="b"))
    [removed] = result.removable
    assert removed.node == "n1"
    assert [(m.pod, m.node) for m in removed.moves] == [("default/a", "n2")]
    assert kept_reasons(result) == {"n2": "not underutilized: 0.62 (cpu, threshold 0.5)"}


def test_utilization_is_the_larger_of_cpu_and_memory_requests_over_allocatable():
    result = plan(node("n1", cpu="4", memory="8Gi"), pod("a", cpu="1", memory="6Gi", node_name="n1", owner="a"))
    [kept] = result.kept
    assert kept.message == "not underutilized: 0.75 (memory, threshold 0.5)"
    assert (kept.utilization.cpu, kept.utilization.memory) == (0.25, 0.75)


def test_the_threshold_is_a_flag():
    items = (node("n1", cpu="4"), node("n2", cpu="4"), pod("a", cpu="1", node_name="n1", owner="a"),
             pod("b", cpu="1", node_name="n2", owner="b"))
    assert [r.node for r in plan(*items, options=ScaleDownOptions(utilization_threshold=0.2)).removable] == []
    assert [r.node for r in plan(*items, options=ScaleDownOptions(utilization_threshold=0.3)).removable] == ["n1"]


def test_daemonset_and_mirror_pods_count_in_utilization_unless_ignored():
    items = (node("n1", cpu="4"), daemonset_pod("agent", "n1", cpu="1500m"), mirror_pod("proxy", "n1", cpu="500m"),
             pod("a", cpu="100m", node_name="n1", owner="a"))
    assert kept_reasons(plan(*items)) == {"n1": "not underutilized: 0.53 (cpu, threshold 0.5)"}
    ignoring = plan(*items, options=ScaleDownOptions(ignore_daemonsets_utilization=True,
                                                     ignore_mirror_pods_utilization=True))
    # 100m over 4 cpu less the 2 cpu of the ignored pods; the only node, so nowhere to move.
    [kept] = ignoring.kept
    assert kept.utilization is not None and kept.utilization.cpu == 0.05
    assert kept.reason == "NoPlaceToMovePods"


def test_daemonset_and_mirror_pods_go_with_the_node_and_are_not_moved():
    result = plan(node("n1", cpu="4"), node("n2", cpu="4"), daemonset_pod("agent-n1", "n1"),
                  mirror_pod("proxy-n1", "n1"), pod("a", cpu="100m", node_name="n1", owner="a"),
                  pod("b", cpu="3", node_name="n2", owner="b"))
    [removed] = result.removable
    assert [m.pod for m in removed.moves] == ["default/a"]
    assert removed.daemonset_pods == ["default/agent-n1"]


def test_a_node_annotated_scale_down_disabled_is_kept():
    result = plan(annotated(node("n1"), **{CA + "scale-down-disabled": "true"}), node("n2"))
    assert kept_reasons(result) == {"n1": f'annotated {CA}scale-down-disabled: "true"'}
    assert [r.node for r in result.removable] == ["n2"]


def test_a_pod_without_a_controller_keeps_its_node_unless_safe_to_evict():
    bare = pod("bare", node_name="n1")
    result = plan(node("n1"), node("n2", cpu="8"), bare, pod("b", cpu="5", node_name="n2", owner="b"))
    assert kept_reasons(result) == {"n1": "pod default/bare has no controller",
                                    "n2": "not underutilized: 0.62 (cpu, threshold 0.5)"}
    [kept] = [k for k in result.kept if k.node == "n1"]
    assert (kept.reason, kept.pod, kept.pod_reason) == ("BlockedByPod", "default/bare", "NotReplicated")
    safe = plan(node("n1"), node("n2", cpu="8"), annotated(pod("bare", node_name="n1"), **{CA + "safe-to-evict": "true"}),
                pod("b", cpu="5", node_name="n2", owner="b"))
    assert [(r.node, [m.pod for m in r.moves]) for r in safe.removable] == [("n1", ["default/bare"])]


def test_a_pod_of_a_controller_kind_cluster_autoscaler_does_not_know_keeps_its_node():
    custom = pod("x", node_name="n1")
    custom["metadata"]["ownerReferences"] = [{"apiVersion": "acme.io/v1", "kind": "Widget", "name": "w", "uid": "u",
                                              "controller": True}]
    result = plan(node("n1"), node("n2"), custom)
    assert kept_reasons(result)["n1"].startswith("pod default/x is controlled by a Widget, not a kind")


def test_a_pod_annotated_not_safe_to_evict_keeps_its_node():
    result = plan(node("n1"), node("n2"), annotated(pod("a", node_name="n1", owner="a"), **{CA + "safe-to-evict": "false"}))
    assert kept_reasons(result)["n1"] == f'pod default/a is annotated {CA}safe-to-evict: "false"'


def test_a_kube_system_pod_keeps_its_node_unless_a_budget_covers_it():
    dns = pod("dns", node_name="n1", namespace="kube-system", owner="dns", labels={"app": "dns"})
    result = plan(node("n1"), *busy("n2"), dns)
    assert kept_reasons(result)["n1"] == "pod kube-system/dns has no PDB (a kube-system pod needs one)"
    covered = plan(node("n1"), *busy("n2"), dns, pdb("dns", "dns", namespace="kube-system", maxUnavailable=1))
    assert [(r.node, r.moves[0].node) for r in covered.removable] == [("n1", "n2")]


def test_local_storage_keeps_a_node_unless_memory_backed_or_listed_safe():
    def with_volume(name: str, volume: dict, **annotations: str) -> dict:
        p = pod(name, node_name="n1", owner=name, volumes=[{"name": "data", **volume}])
        return annotated(p, **annotations) if annotations else p

    disk = plan(node("n1"), node("n2"), with_volume("a", {"emptyDir": {}}))
    assert kept_reasons(disk)["n1"] == "pod default/a has local storage (volume data)"
    host = plan(node("n1"), node("n2"), with_volume("a", {"hostPath": {"path": "/var"}}))
    assert kept_reasons(host)["n1"] == "pod default/a has local storage (volume data)"
    memory = plan(node("n1"), *busy("n2"), with_volume("a", {"emptyDir": {"medium": "Memory"}}))
    listed = plan(node("n1"), *busy("n2"), with_volume("a", {"emptyDir": {}}, **{CA + "safe-to-evict-local-volumes": "data"}))
    assert [r.node for r in memory.removable] == [r.node for r in listed.removable] == ["n1"]


def test_a_budget_allowing_no_disruption_keeps_the_node():
    result = plan(node("n1"), node("n2"), pod("web-0", node_name="n1", owner="web", labels={"app": "web"}),
                  pdb("web", "web", minAvailable=1))
    assert kept_reasons(result)["n1"] == ("pod default/web-0: not enough pod disruption budget (PDB default/web allows "
                                          "no more disruptions)")


def test_budgets_are_counted_down_as_nodes_are_picked():
    """Two replicas on two nodes, a budget allowing one disruption: the first node goes, the
    second is kept for want of budget."""
    items = [node("n1"), node("n2"), *busy("n3"),
             *[pod(f"web-{i}", node_name=f"n{i + 1}", owner="web", labels={"app": "web"}) for i in range(2)],
             pdb("web", "web", maxUnavailable=1)]
    result = plan(*items)
    assert [r.node for r in result.removable] == ["n1"]
    assert kept_reasons(result)["n2"].endswith("allows no more disruptions)")


def test_a_node_whose_pod_fits_nowhere_else_is_kept_with_the_schedulers_reason():
    result = plan(node("n1", cpu="8"), node("n2", cpu="2"), pod("big", cpu="3", node_name="n1", owner="big"),
                  pod("b", cpu="1500m", node_name="n2", owner="b"))
    reason = kept_reasons(result)["n1"]
    assert reason.startswith("pod default/big cannot move: 0/2 nodes are available: ")
    assert "Insufficient cpu" in reason
    [kept] = [k for k in result.kept if k.node == "n1"]
    assert kept.reason == "NoPlaceToMovePods"


def test_each_candidate_is_checked_with_the_pods_of_the_nodes_picked_before_already_moved():
    """n1's pod moves to n2; n2 then has two pods to move and no node left to take them."""
    result = plan(node("n1"), node("n2"), pod("a", cpu="1", node_name="n1", owner="a"),
                  pod("b", cpu="1", node_name="n2", owner="b"))
    [removed] = result.removable
    assert (removed.node, [(m.pod, m.node) for m in removed.moves]) == ("n1", [("default/a", "n2")])
    assert kept_reasons(result)["n2"].startswith("pod default/")
    assert result.kept[0].reason == "NoPlaceToMovePods"


def test_a_pod_moved_onto_a_node_removed_later_moves_again():
    result = plan(node("n1", cpu="4"), node("n2", cpu="16"), node("n3", cpu="16"),
                  pod("a", cpu="1", node_name="n1", owner="a"), pod("b", cpu="1", node_name="n2", owner="b"),
                  pod("c", cpu="7", node_name="n3", owner="c"))
    assert [r.node for r in result.removable] == ["n1", "n2"]
    assert result.removable[0].moves[0].node == "n2"  # the roomiest, n2, before it goes too
    assert result.destinations == {"default/a": "n3", "default/b": "n3"}


def test_empty_nodes_are_picked_first():
    result = plan(node("n1", cpu="16"), node("n2", cpu="16"), node("n3", cpu="16"),
                  pod("a", cpu="1", node_name="n1", owner="a"), pod("c", cpu="7", node_name="n3", owner="c"))
    assert [r.node for r in result.removable] == ["n2", "n1"]
    assert result.removable[0].moves == []


def test_a_pod_that_tolerates_every_taint_is_not_placed_back_on_the_node_being_removed():
    """The catch-all toleration tolerates ToBeDeletedByClusterAutoscaler: left alone, the
    scheduler would put the pod back on roomy n1."""
    agent = pod("a", cpu="1", node_name="n1", owner="a", tolerations=[{"operator": "Exists"}])
    result = plan(node("n1", cpu="64"), node("n2", cpu="4"), agent, pod("b", cpu="1900m", node_name="n2", owner="b"))
    [removed] = result.removable
    assert (removed.node, removed.moves[0].node) == ("n1", "n2")


def test_moved_pods_never_preempt():
    urgent = pod("urgent", cpu="3", node_name="n1", owner="u")
    urgent["spec"]["priority"] = 1000
    low = pod("low", cpu="3", node_name="n2", owner="l")
    result = plan(node("n1", cpu="8"), node("n2", cpu="4"), urgent, low)
    assert [k.reason for k in result.kept] == ["NoPlaceToMovePods", "NotUnderutilized"]


def test_a_node_already_being_deleted_is_kept():
    doomed = node("n1")
    doomed["spec"]["taints"] = [{"key": "ToBeDeletedByClusterAutoscaler", "value": "1", "effect": "NoSchedule"}]
    result = plan(doomed, node("n2"))
    assert kept_reasons(result)["n1"] == "already tainted ToBeDeletedByClusterAutoscaler: being deleted"


def test_a_kept_node_gets_its_pods_back_and_the_next_candidate_sees_them():
    """n1's pods do not all fit elsewhere, so none moves: n2 then still sees only its own."""
    result = plan(node("n1", cpu="4"), node("n2", cpu="4"),
                  pod("a1", cpu="1500m", node_name="n1", owner="a"), pod("a2", cpu="1500m", node_name="n1", owner="a"),
                  pod("b", cpu="1", node_name="n2", owner="b"))
    assert [r.node for r in result.removable] == ["n2"]
    assert result.removable[0].moves[0].node == "n1"


def test_a_node_whose_pods_a_budget_cannot_all_let_go_at_once_is_removable_but_risky():
    """Each pod passes the budget rule alone (one disruption left), as cluster-autoscaler checks
    them; together they need two: cluster-autoscaler's IsRisky."""
    items = [node("n1"), *busy("n2"),
             *[pod(f"web-{i}", node_name="n1", owner="web", labels={"app": "web"}) for i in range(2)],
             pdb("web", "web", maxUnavailable=1)]
    [removed] = plan(*items).removable
    assert (removed.node, removed.risky) == ("n1", True)
