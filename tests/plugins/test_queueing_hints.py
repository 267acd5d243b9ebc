"""Queueing hints of the node-level plugins: which cluster events may help a rejected pod."""

from __future__ import annotations

import pytest

from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins import nodeaffinity, nodename, nodeports, nodeunschedulable, tainttoleration
from kubesched.plugins.noderesources import fit
from kubesched.framework.events import QueueingHint

QUEUE, SKIP = QueueingHint.QUEUE, QueueingHint.SKIP


def make_node(name="n1", cpu="4", memory="8Gi", pods="110", labels=None, taints=None, unschedulable=False):
    spec = {"taints": taints} if taints else {}
    if unschedulable:
        spec["unschedulable"] = True
    return parse_node({"metadata": {"name": name, "labels": labels or {}}, "spec": spec,
                       "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}})


def make_pod(name="p", cpu="1", memory="1Gi", ports=(), node_name="", **spec):
    container = {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}},
                 "ports": [{"containerPort": p, "hostPort": p} for p in ports]}
    return parse_pod({"metadata": {"name": name, "namespace": "default"},
                      "spec": {"containers": [container], "nodeName": node_name, **spec}})


def hint_of(plugin, resource_prefix: str):
    return next(r.hint for r in plugin.events_to_register() if r.event.resource.startswith(resource_prefix))


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (None, make_node(cpu="4"), QUEUE),
        (None, make_node(cpu="500m"), SKIP),
        (None, make_node(pods="0"), SKIP),
        (make_node(cpu="2"), make_node(cpu="4"), QUEUE),
        (make_node(cpu="4"), make_node(cpu="4", labels={"x": "y"}), SKIP),
    ],
    ids=["new-node-fits", "new-node-too-small", "new-node-takes-no-pods", "allocatable-grew", "nothing-grew"],
)
def test_fit_queues_on_nodes_that_could_hold_the_pod(old, new, expected):
    plugin = fit.new(fit.parse_args(None), None)
    assert hint_of(plugin, "Node")(make_pod(cpu="1"), old, new) == expected


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (make_pod("gone", node_name="n1"), None, QUEUE),
        (make_pod("big", cpu="2", node_name="n1"), make_pod("big", cpu="1", node_name="n1"), QUEUE),
        (make_pod("big", cpu="2", node_name="n1"), make_pod("big", cpu="2", node_name="n1"), SKIP),
    ],
    ids=["assigned-pod-deleted", "assigned-pod-scaled-down", "no-change"],
)
def test_fit_queues_when_an_assigned_pod_frees_resources(old, new, expected):
    plugin = fit.new(fit.parse_args(None), None)
    assert hint_of(plugin, "AssignedPod")(make_pod(cpu="1"), old, new) == expected


def test_node_affinity_queues_only_for_a_node_that_starts_matching():
    plugin = nodeaffinity.new(nodeaffinity.parse_args(None), None)
    hint = hint_of(plugin, "Node")
    pod = make_pod(nodeSelector={"disk": "ssd"})
    assert hint(pod, None, make_node(labels={"disk": "ssd"})) == QUEUE
    assert hint(pod, None, make_node(labels={"disk": "hdd"})) == SKIP
    assert hint(pod, make_node(labels={"disk": "ssd"}), make_node(labels={"disk": "ssd", "x": "1"})) == SKIP
    assert hint(pod, make_node(labels={"disk": "hdd"}), make_node(labels={"disk": "ssd"})) == QUEUE


def test_taint_toleration_queues_when_the_taints_become_tolerable():
    hint = hint_of(tainttoleration.TaintToleration(), "Node")
    tainted = make_node(taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    assert hint(make_pod(), tainted, make_node()) == QUEUE
    assert hint(make_pod(), None, tainted) == SKIP
    tolerating = make_pod(tolerations=[{"key": "k", "operator": "Exists"}])
    assert hint(tolerating, None, tainted) == QUEUE


def test_node_unschedulable_queues_when_a_node_is_uncordoned():
    hint = hint_of(nodeunschedulable.NodeUnschedulable(), "Node")
    assert hint(make_pod(), make_node(unschedulable=True), make_node()) == QUEUE
    assert hint(make_pod(), make_node(), make_node(labels={"a": "b"})) == SKIP
    assert hint(make_pod(), None, make_node(unschedulable=True)) == SKIP


def test_node_name_queues_only_for_the_named_node():
    hint = hint_of(nodename.NodeName(), "Node")
    assert hint(make_pod(nodeName="n2"), None, make_node("n2")) == QUEUE
    assert hint(make_pod(nodeName="n2"), None, make_node("n1")) == SKIP


def test_node_ports_queues_when_a_pod_holding_a_wanted_port_goes():
    hint = hint_of(nodeports.NodePorts(), "AssignedPod")
    assert hint(make_pod(ports=[80]), make_pod("holder", ports=[80], node_name="n1"), None) == QUEUE
    assert hint(make_pod(ports=[80]), make_pod("other", ports=[443], node_name="n1"), None) == SKIP
