"""``parse_bound_pod_of``: the informer's echo of a binding, made from the pending pod."""

from __future__ import annotations

import copy
from dataclasses import fields
from typing import Any, Callable

import pytest

from kubesched.objects.pod import PodInfo, parse_bound_pod_of, parse_pod


def pending_document() -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "7",
                     "creationTimestamp": "2026-11-26T10:00:00Z", "labels": {"app": "web"},
                     "annotations": {"team": "a"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                          "uid": "rs-1", "controller": True}]},
        "spec": {"schedulerName": "default-scheduler", "priority": 5,
                 "containers": [{"name": "c", "image": "nginx:1.27",
                                 "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}],
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
                             {"name": "cfg", "configMap": {"name": "web"}}],
                 "tolerations": [{"key": "k", "operator": "Exists"}]},
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }


def bound_document(pending: dict[str, Any], node: str = "node-3") -> dict[str, Any]:
    """What the API server sends back once ``pods/binding`` set the node."""
    bound = copy.deepcopy(pending)
    bound["metadata"]["resourceVersion"] = "8"
    bound["spec"]["nodeName"] = node
    bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                      "lastTransitionTime": "2026-11-26T10:00:01Z"}]
    return bound


def field_values(pod: PodInfo) -> dict[str, object]:
    return {f.name: getattr(pod, f.name) for f in fields(pod)}


def test_the_echo_of_a_binding_is_the_bound_pod_as_parse_pod_makes_it() -> None:
    pending = pending_document()
    echo = bound_document(pending)
    made = parse_bound_pod_of(parse_pod(pending, keep_raw=True), echo)
    assert made is not None
    assert field_values(made) == field_values(parse_pod(echo, keep_raw=False))
    assert made.raw is None and made.node_name == "node-3"
    assert all(volume.source is None for volume in made.volumes)


def test_an_earlier_pod_scheduled_condition_may_change() -> None:
    pending = pending_document()
    pending["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    echo = bound_document(pending)
    made = parse_bound_pod_of(parse_pod(pending, keep_raw=True), echo)
    assert made is not None
    assert field_values(made) == field_values(parse_pod(echo, keep_raw=False))


def test_labels_the_binding_copied_onto_the_pod_are_the_bound_pod_s() -> None:
    pending = pending_document()
    echo = bound_document(pending)
    echo["metadata"]["labels"] = {"app": "web", "topology.kubernetes.io/zone": "z1"}  # PodTopologyLabelsAdmission
    made = parse_bound_pod_of(parse_pod(pending, keep_raw=True), echo)
    assert made is not None
    assert field_values(made) == field_values(parse_pod(echo, keep_raw=False))
    assert made.labels == {"app": "web", "topology.kubernetes.io/zone": "z1"}


def test_a_nomination_the_binding_cleared_is_cleared_on_the_bound_pod() -> None:
    pending = pending_document()
    pending["status"]["nominatedNodeName"] = "node-3"
    echo = bound_document(pending)
    del echo["status"]["nominatedNodeName"]  # ClearingNominatedNodeNameAfterBinding
    made = parse_bound_pod_of(parse_pod(pending, keep_raw=True), echo)
    assert made is not None
    assert field_values(made) == field_values(parse_pod(echo, keep_raw=False))
    assert made.nominated_node_name == ""


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for part in parents:
            doc = doc[part]
        doc[last] = value
    return change


@pytest.mark.parametrize("change", [
    _set("metadata.annotations", {"team": "b"}),
    _set("metadata.generation", 2),
    _set("metadata.deletionTimestamp", "2026-11-26T10:00:02Z"),
    _set("spec.priority", 7),
    _set("spec.volumes", []),
    _set("status.startTime", "2026-11-26T10:00:02Z"),
    _set("status.containerStatuses", [{"name": "c", "ready": False}]),
], ids=["annotations", "generation", "deletion", "priority", "volumes", "start time",
        "container statuses"])
def test_anything_else_changed_leaves_the_echo_to_a_full_parse(change: Callable[[dict[str, Any]], None]) -> None:
    pending = pending_document()
    echo = bound_document(pending)
    change(echo)
    assert parse_bound_pod_of(parse_pod(pending, keep_raw=True), echo) is None


def test_a_pod_that_was_already_bound_is_not_made_from_its_old_state() -> None:
    bound = bound_document(pending_document())
    moved = bound_document(bound, node="node-4")
    assert parse_bound_pod_of(parse_pod(bound, keep_raw=True), moved) is None


def test_a_pending_pod_parsed_without_its_document_is_not_made_from() -> None:
    pending = pending_document()
    assert parse_bound_pod_of(parse_pod(pending, keep_raw=False), bound_document(pending)) is None


def test_a_change_that_does_not_bind_the_pod_is_not_made_from_its_old_state() -> None:
    pending = pending_document()
    relabelled = copy.deepcopy(pending)
    relabelled["metadata"]["resourceVersion"] = "8"
    assert parse_bound_pod_of(parse_pod(pending, keep_raw=True), relabelled) is None
