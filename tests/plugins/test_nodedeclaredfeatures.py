"""NodeDeclaredFeatures: a pod needing a node feature goes only to nodes declaring it."""

from __future__ import annotations

import pytest

from kubesched.framework import ActionType, CycleState, QueueingHint
from kubesched.framework.features import Features
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures, infer_for_scheduling

from ..helpers import Cluster, filter_all, node, pod, summarise

REJECTED = ("UnschedulableAndUnresolvable", ("node(s) didn't match Pod's required features",))
RESTART_ALL = [{"name": "c", "image": "x", "restartPolicyRules": [{"action": "RestartAllContainers",
                                                                   "exitCodes": {"operator": "In", "values": [42]}}]}]


def declaring(name: str, *features: str) -> dict:
    doc = node(name)
    doc["status"]["declaredFeatures"] = list(features)
    return doc


def restart_all_pod(name: str = "p", init: bool = False) -> dict:
    doc = pod(name)
    if init:
        doc["spec"]["initContainers"] = RESTART_ALL
    else:
        doc["spec"]["containers"] = RESTART_ALL
    return doc


@pytest.mark.parametrize("spec, expected", [
    pytest.param({"containers": [{"name": "c"}]}, frozenset(), id="a plain pod needs nothing"),
    pytest.param({"containers": RESTART_ALL}, {"RestartAllContainersOnContainerExits"}, id="restart rule in a container"),
    pytest.param({"containers": [], "initContainers": RESTART_ALL}, {"RestartAllContainersOnContainerExits"},
                 id="restart rule in an init container"),
    pytest.param({"containers": [{"name": "c", "restartPolicyRules": [{"action": "Restart"}]}]}, frozenset(),
                 id="another action needs nothing"),
    pytest.param({"hostNetwork": True, "hostUsers": False}, {"UserNamespacesHostNetworkSupport"},
                 id="host network in a user namespace"),
    pytest.param({"hostNetwork": True}, frozenset(), id="host network with host users"),
])
def test_inferred_features(spec, expected):
    assert infer_for_scheduling(spec) == frozenset(expected)


@pytest.mark.parametrize("init", [False, True])
def test_nodes_not_declaring_the_feature_are_rejected(init):
    cluster = Cluster([declaring("yes", "RestartAllContainersOnContainerExits"), declaring("other", "Foo"), node("none")])
    got = filter_all(NodeDeclaredFeatures(True), parse_pod(restart_all_pod(init=init)), cluster)
    assert summarise(got) == {"yes": None, "other": REJECTED, "none": REJECTED}


def test_a_pod_needing_nothing_is_skipped():
    plugin = NodeDeclaredFeatures(True)
    _, status = plugin.pre_filter(CycleState(), parse_pod(pod("p")), Cluster([node("n")]).snapshot)
    assert status is not None and status.code.name == "SKIP"


def test_with_the_gate_off_every_pod_is_skipped():
    plugin = NodeDeclaredFeatures(Features.from_gates({"NodeDeclaredFeatures": False}).enable_node_declared_features)
    _, status = plugin.pre_filter(CycleState(), parse_pod(restart_all_pod()), Cluster([node("n")]).snapshot)
    assert status is not None and status.code.name == "SKIP"
    assert plugin.events_to_register() == []


def test_node_events_registered_are_add_and_declared_feature_updates():
    (node_event, pod_event) = NodeDeclaredFeatures(True).events_to_register()
    assert node_event.event.action == ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
    assert pod_event.event.action == ActionType.UPDATE


def test_node_hint_skips_an_update_keeping_the_declared_features():
    (node_event, _) = NodeDeclaredFeatures(True).events_to_register()
    target = parse_pod(restart_all_pod())
    old, same = parse_node(declaring("n", "A")), parse_node(declaring("n", "A"))
    changed = parse_node(declaring("n", "A", "RestartAllContainersOnContainerExits"))
    assert node_event.hint(target, old, same) == QueueingHint.SKIP
    assert node_event.hint(target, old, changed) == QueueingHint.QUEUE
    assert node_event.hint(target, None, changed) == QueueingHint.QUEUE


def test_pod_hint_queues_only_the_pods_own_change_of_requirements():
    (_, pod_event) = NodeDeclaredFeatures(True).events_to_register()
    old = parse_pod(restart_all_pod())
    relaxed_doc = pod("p", uid=old.uid)
    relaxed = parse_pod(relaxed_doc)
    assert pod_event.hint(old, old, relaxed) == QueueingHint.QUEUE
    assert pod_event.hint(old, old, parse_pod(restart_all_pod())) == QueueingHint.SKIP  # another pod
    again = restart_all_pod()
    again["metadata"]["uid"] = old.uid
    assert pod_event.hint(old, old, parse_pod(again)) == QueueingHint.SKIP


def test_pods_are_signed_by_the_features_they_need():
    plugin = NodeDeclaredFeatures(True)
    fragments, status = plugin.sign_pod(parse_pod(restart_all_pod()))
    assert status is None
    assert [(f.key, f.value) for f in fragments] == [("v1.Pod.Spec.RequiredFeatures()", ("RestartAllContainersOnContainerExits",))]
    assert plugin.sign_pod(parse_pod(pod("plain")))[0][0].value == ()
