"""The Handle plugins get: objects of kinds the scheduler does not model, pod events,
activation of waiting pods, and queueing hints on custom resources."""

from __future__ import annotations

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import (
    PODS_TO_ACTIVATE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    JSONObject,
    PluginSpec,
    PreFilterResult,
    QueueingHint,
    SnapshotView,
    Status,
)
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.objects import PodInfo
from kubesched.plugins.registry import in_tree_registry

TICKETS = ("example.com/v1", "Ticket", "tickets")


class NeedsTicket:
    """PreFilter: a pod runs only once a Ticket named after it exists in its namespace."""

    name = "NeedsTicket"

    def __init__(self, handle: Handle) -> None:
        self.tickets = handle.object_store(*TICKETS)
        self.seen: list[str] = []
        handle.add_pod_handler(self)

    def on_pod_add(self, pod: PodInfo) -> None:
        self.seen.append(f"add {pod.key}")

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None:
        self.seen.append(f"update {new.key} on {new.node_name or '-'}")

    def on_pod_delete(self, pod: PodInfo) -> None:
        self.seen.append(f"delete {pod.key}")

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        if self.tickets.get(pod.namespace, pod.name) is None:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no ticket")
        return None, None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(self.tickets.resource, ActionType.ADD), self._hint)]

    @staticmethod
    def _hint(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        meta = new.get("metadata") if isinstance(new, dict) else None
        if isinstance(meta, dict) and meta.get("name") == pod.name:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _ticket(name: str) -> JSONObject:
    return {"apiVersion": "example.com/v1", "kind": "Ticket", "metadata": {"name": name, "namespace": "default"}}


def _simulation(*tickets: str) -> tuple[Simulation, NeedsTicket]:
    made: list[NeedsTicket] = []

    def new(args: None, handle: Handle) -> NeedsTicket:
        made.append(NeedsTicket(handle))
        return made[-1]

    registry = in_tree_registry()
    registry.register(PluginSpec("NeedsTicket", new, object_kinds=(TICKETS[:2],)))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"preFilter": {"enabled": [{"name": "NeedsTicket"}]}}}]}, registry)
    objects: list[JSONObject] = [
        {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        *({"kind": "Pod", "metadata": {"name": p, "namespace": "default", "uid": p},
           "spec": {"containers": [{"name": "c", "image": "i"}]}} for p in ("a", "b")),
        *(_ticket(t) for t in tickets),
    ]
    snapshot = snapshot_from_objects([("test", o) for o in objects], plugin_kinds=frozenset({"Ticket"}))
    return Simulation(snapshot, config, registry, tie_break="name"), made[0]


def test_snapshot_objects_of_a_plugin_kind_reach_its_store():
    sim, plugin = _simulation("a")
    result = sim.run()
    assert [pod for pod, _ in result.placements] == ["default/a"]
    assert result.outcomes["default/b"].message == (
        "0/1 nodes are available: no ticket. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_a_new_object_wakes_only_the_pods_its_hint_queues():
    sim, plugin = _simulation()
    sim.run()
    plugin.tickets.upsert(_ticket("b"))  # as an informer would deliver it
    assert sim.scheduler.queue.num_active() + len(sim.scheduler.queue.pending_pods()["backoffQ"]) == 1
    result = sim.run()
    assert [pod for pod, _ in result.placements] == ["default/b"]


def test_pod_handlers_see_pods_added_and_bound():
    sim, plugin = _simulation("a")
    sim.run()
    assert plugin.seen[:2] == ["add default/a", "add default/b"]
    assert "update default/a on n1" in plugin.seen


class Hold:
    """Filter rejects the pod ``waiter`` until ``Release`` ran; registers no event, so only
    activation can bring the waiter back before the 5-minute flush."""

    name = "Hold"

    def __init__(self) -> None:
        self.released = False

    def filter(self, state: CycleState, pod: PodInfo, node: object) -> Status | None:
        if pod.name == "waiter" and not self.released:
            return Status(Code.UNSCHEDULABLE, "held")
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return []


class Release:
    """PreBind of ``trigger`` releases the hold and asks for the waiter's activation."""

    name = "Release"

    def __init__(self, hold: Hold, waiter: list[PodInfo]) -> None:
        self.hold, self.waiter = hold, waiter

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if pod.name == "trigger":
            self.hold.released = True
            state.read(PODS_TO_ACTIVATE).update({p.uid: p for p in self.waiter})
        return None


def test_pods_to_activate_written_in_the_binding_cycle_are_activated_when_it_succeeds():
    hold = Hold()
    waiter: list[PodInfo] = []
    registry = in_tree_registry()
    registry.register(PluginSpec("Hold", lambda args, handle: hold))
    registry.register(PluginSpec("Release", lambda args, handle: Release(hold, waiter)))
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {
            "filter": {"enabled": [{"name": "Hold"}]}, "preBind": {"enabled": [{"name": "Release"}]}}}]}, registry)
    objects: list[JSONObject] = [
        {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
        *({"kind": "Pod", "metadata": {"name": p, "namespace": "default", "uid": p},
           "spec": {"containers": [{"name": "c", "image": "i"}]}} for p in ("waiter", "trigger")),
    ]
    sim = Simulation(snapshot_from_objects([("test", o) for o in objects]), config, registry, tie_break="name")
    waiter.append(sim.scheduler.pods["waiter"])
    result = sim.run()
    assert [pod for pod, _ in result.placements] == ["default/trigger", "default/waiter"]
    assert result.virtual_seconds < 60  # activated, not flushed after 5 minutes
