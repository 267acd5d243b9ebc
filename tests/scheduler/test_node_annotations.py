"""Node annotations: plugins read them, and a change to them is upstream's
``UpdateNodeAnnotation`` event, which wakes pods as the rejecting plugin's hints say."""

from __future__ import annotations

from kubesched.clock import VirtualClock
from kubesched.cluster.simulated import SimulatedCluster
from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    PluginSpec,
    QueueingHint,
    Status,
)
from kubesched.framework.config import parse_config
from kubesched.objects import Node, NodeInfo, PodInfo
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.queue.scheduling_queue import UNSCHEDULABLE
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import Scheduler

from ..helpers import config, node, pod

WINDOW = "acme.io/window"
CLOSED = Status(Code.UNSCHEDULABLE, "node(s) were outside their maintenance window")


def window_opened(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    if isinstance(new, Node) and new.annotations.get(WINDOW) == "open":
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class OpenWindowOnly:
    name = "OpenWindowOnly"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None if node.node.annotations.get(WINDOW) == "open" else CLOSED

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_ANNOTATION), window_opened)]


def _annotated(name: str, annotations: dict[str, str]) -> dict:
    raw = node(name)
    raw["metadata"]["annotations"] = annotations
    return raw


def scheduler(*nodes: dict, clock: VirtualClock | None = None) -> Scheduler:
    registry = in_tree_registry()

    def new(args: None, handle: Handle) -> OpenWindowOnly:
        return OpenWindowOnly()

    registry.register(PluginSpec("OpenWindowOnly", new))
    doc = config({"schedulerName": "default-scheduler",
                  "plugins": {"multiPoint": {"enabled": [{"name": "OpenWindowOnly"}]}}})
    clock = clock or VirtualClock()
    sched = new_scheduler(parse_config(doc, registry, UPSTREAM_ONLY), SimulatedCluster(clock), clock, registry,
                          tie_break="name")
    for raw in nodes:
        sched.on_node_add(parse_node(raw))
    return sched


def rejected(sched: Scheduler, raw: dict) -> PodInfo:
    p = parse_pod(raw)
    sched.on_pod_add(p)
    sched.schedule_one()
    assert sched.queue.where(p.uid) == UNSCHEDULABLE
    return p


def test_a_filter_reads_node_annotations():
    sched = scheduler(_annotated("closed", {WINDOW: "closed"}), _annotated("open", {WINDOW: "open"}))
    sched.on_pod_add(parse_pod(pod("p")))
    sched.schedule_one()
    assert sched.cache.snapshot().get("open").pods  # type: ignore[union-attr]


def test_an_annotation_change_wakes_a_pod_when_the_hint_says_so():
    closed = _annotated("n", {WINDOW: "closed"})
    sched = scheduler(closed)
    p = rejected(sched, pod("p"))
    sched.on_node_update(parse_node(closed), parse_node(_annotated("n", {WINDOW: "closed", "other": "x"})))
    assert sched.queue.where(p.uid) == UNSCHEDULABLE  # the hint said SKIP
    sched.on_node_update(parse_node(closed), parse_node(_annotated("n", {WINDOW: "open"})))
    assert sched.queue.where(p.uid) != UNSCHEDULABLE


def test_the_updated_annotations_are_what_the_next_cycle_reads():
    closed = _annotated("n", {WINDOW: "closed"})
    clock = VirtualClock()
    sched = scheduler(closed, clock=clock)
    p = rejected(sched, pod("p"))
    sched.on_node_update(parse_node(closed), parse_node(_annotated("n", {WINDOW: "open"})))
    clock.advance(20)  # past the pod's backoff
    sched.queue.flush_backoff_completed()
    sched.schedule_one()
    assert p.uid in sched.cache.snapshot().get("n").pods  # type: ignore[union-attr]


def test_an_update_of_labels_alone_is_no_annotation_event():
    sched = scheduler(_annotated("n", {WINDOW: "closed"}))
    p = rejected(sched, pod("p"))
    relabelled = _annotated("n", {WINDOW: "open"})
    relabelled["metadata"]["labels"] = {"x": "y"}
    sched.on_node_update(parse_node(relabelled), parse_node(relabelled | {"metadata": {
        "name": "n", "labels": {"x": "z"}, "annotations": {WINDOW: "open"}}}))
    assert sched.queue.where(p.uid) == UNSCHEDULABLE  # OpenWindowOnly registered no label event
