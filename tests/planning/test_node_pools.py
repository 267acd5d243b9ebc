"""Pools found from a pool label, and the template node a new node of a pool would be,
built as cluster-autoscaler builds one from a running node."""

from __future__ import annotations

import pytest

from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.planning.node_pools import (
    HOSTNAME_LABEL,
    NodePool,
    PoolError,
    build_template,
    build_templates,
    discover_pools,
    is_daemon_or_mirror_pod,
    sanitized_taints,
)
from kubesched.objects.taints import Taint
from tests.helpers import node, pod, taint

TYPE = "node.kubernetes.io/instance-type"
GROUP = "eks.amazonaws.com/nodegroup"


def _node(name: str, pool: str | None = "small", label: str = TYPE, labels: dict | None = None, **kwargs: object):
    all_labels = {**({label: pool} if pool is not None else {}), **(labels or {})}
    return parse_node(node(name, labels=all_labels, **kwargs))  # type: ignore[arg-type]


def _daemon_pod(name: str, node_name: str) -> dict:
    raw = pod(name, namespace="kube-system", cpu="100m", node_name=node_name)
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                           "uid": "ds-agent", "controller": True}]
    return raw


def test_nodes_are_grouped_by_the_pool_label_value_in_name_order():
    nodes = [_node("b1", "big"), _node("s1", "small"), _node("b2", "big"), _node("none", None)]
    pools = discover_pools(nodes, TYPE)
    assert [(p.name, p.nodes) for p in pools] == [("big", ("b1", "b2")), ("small", ("s1",))]


def test_another_pool_label_can_be_chosen():
    nodes = [_node("a", "workers", label=GROUP), _node("b", "gpu", label=GROUP)]
    assert [p.name for p in discover_pools(nodes, GROUP)] == ["gpu", "workers"]


def test_a_label_no_node_has_is_an_error_naming_the_labels_found():
    nodes = [_node("a", "workers", label=GROUP)]
    with pytest.raises(PoolError) as err:
        discover_pools(nodes, TYPE)
    assert err.value.lines == [f"--pool-label {TYPE}: no node has this label (pool labels found: {GROUP})"]


@pytest.mark.parametrize(("first", "expected"), [
    ({"unschedulable": True}, "second"),
    ({"taints": [taint("ToBeDeletedByClusterAutoscaler")]}, "second"),
    ({"taints": [taint("node.kubernetes.io/not-ready", effect="NoExecute")]}, "second"),
    ({"taints": [taint("dedicated", "db")]}, "first"),
])
def test_the_example_is_the_first_node_fit_to_be_one(first, expected):
    pools = discover_pools([_node("first", **first), _node("second")], TYPE)
    assert pools[0].example == expected
    assert pools[0].good_example


def test_a_pool_of_unfit_nodes_takes_its_first_node_and_says_so():
    pools = discover_pools([_node("first", unschedulable=True), _node("second", unschedulable=True)], TYPE)
    assert (pools[0].example, pools[0].good_example) == ("first", False)


def test_taints_of_state_are_dropped_and_taints_of_the_pool_kept():
    kept = Taint("dedicated", "db", "NoSchedule")
    dropped = [Taint(k, "", "NoSchedule") for k in (
        "ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler", "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unschedulable", "node.cloudprovider.kubernetes.io/uninitialized",
        "ignore-taint.cluster-autoscaler.kubernetes.io/warming", "startup-taint.cluster-autoscaler.kubernetes.io/x",
        "status-taint.cluster-autoscaler.kubernetes.io/y")]
    assert sanitized_taints([*dropped, kept]) == (kept,)


def _template(example_kwargs: dict, pods: list[dict]):
    example = _node("small-1", **example_kwargs)
    pool = NodePool("small", TYPE, ("small-1",), "small-1", True)
    return build_template(pool, {"small-1": example}, {"small-1": [parse_pod(p) for p in pods]})


def test_the_template_is_the_example_renamed_uncordoned_and_without_state_taints():
    template = _template({"unschedulable": True, "taints": [taint("ToBeDeletedByClusterAutoscaler"),
                                                            taint("dedicated", "db")]}, [])
    made = template.node
    assert made.name == "template-node-for-small"
    assert made.labels[HOSTNAME_LABEL] == made.name
    assert made.labels[TYPE] == "small"
    assert not made.unschedulable
    assert [t.key for t in made.taints] == ["dedicated"]
    assert made.allocatable.milli_cpu == 4000


def test_the_template_runs_the_examples_daemonset_and_mirror_pods_only():
    mirror = pod("static-web", namespace="kube-system", node_name="small-1")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    app = pod("app", node_name="small-1", cpu="1")
    template = _template({}, [_daemon_pod("agent-abc", "small-1"), mirror, app])
    assert sorted(p.name for p in template.pods) == ["agent-abc", "static-web"]
    assert {p.node_name for p in template.pods} == {"template-node-for-small"}


def test_instances_have_their_own_names_uids_hostnames_and_pods():
    template = _template({}, [_daemon_pod("agent-abc", "small-1")])
    first, first_pods = template.instantiate("0")
    second, second_pods = template.instantiate("1")
    assert (first.name, second.name) == ("template-node-for-small-0", "template-node-for-small-1")
    assert first.uid != second.uid
    assert second.labels[HOSTNAME_LABEL] == second.name
    assert [(p.name, p.node_name) for p in second_pods] == [("agent-abc-1", "template-node-for-small-1")]
    assert first_pods[0].uid != second_pods[0].uid


def test_a_pool_name_becomes_a_valid_node_name():
    example = _node("n1", "GPU_Pool")
    templates = build_templates(discover_pools([example], TYPE), [example], [])
    assert templates["GPU_Pool"].node.name == "template-node-for-gpu-pool"


def test_a_template_name_no_existing_node_clashes_with():
    taken = _node("template-node-for-small-0", "other")
    example = _node("s1", "small")
    templates = build_templates(discover_pools([taken, example], TYPE), [taken, example], [])
    assert templates["small"].node.name == "template-node-for-small-2"


def test_daemonset_and_mirror_pods_are_told_from_others():
    mirror = pod("m", node_name="n")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert is_daemon_or_mirror_pod(parse_pod(_daemon_pod("d", "n")))
    assert is_daemon_or_mirror_pod(parse_pod(mirror))
    assert not is_daemon_or_mirror_pod(parse_pod(pod("app", node_name="n")))


def test_several_labels_make_a_pool_of_each_combination_of_values():
    nodes = [_node("a", "m5", labels={"topology.kubernetes.io/zone": "z1"}),
             _node("b", "m5", labels={"topology.kubernetes.io/zone": "z2"}),
             _node("c", "m5", labels={"topology.kubernetes.io/zone": "z1"}), _node("d", "m5")]
    pools = discover_pools(nodes, f"{TYPE},topology.kubernetes.io/zone")
    assert [(p.name, p.nodes) for p in pools] == [("m5/z1", ("a", "c")), ("m5/z2", ("b",))]
    templates = build_templates(pools, nodes, [])
    assert templates["m5/z1"].node.name == "template-node-for-m5-z1"
