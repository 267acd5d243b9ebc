"""A scheduler driven as the live mode drives it, on a virtual clock, with the API server's
answers (bindings, status patches, preemptions' deletions) reported back as an informer
would: later, in order, between scheduling cycles, and when the test says so.

``LiveLikeApi`` is the cluster client: it keeps every pod as the API server has it and
queues what a watch would report; ``LiveLike`` runs the scheduler's loop (cycles, then the
watch's deliveries, then the queue's flushes) as ``cluster.kube.driver`` does. A test can
hold deliveries back, or let only some through, to put an event where it wants it: during
an attempt, before a failure, after a preemption's API call returned.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from kubesched.clock import VirtualClock
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.objects.node import Node, parse_node
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.factory import new_scheduler
from kubesched.scheduler.scheduler import BindingRunner, Scheduler

__all__ = ["LiveLikeApi", "LiveLike"]

Delivery = Callable[[Scheduler], None]


@dataclass
class LiveLikeApi:
    """The API server's side: every pod by uid as stored, and the watch events not yet delivered."""

    pods: dict[str, PodInfo] = field(default_factory=dict)
    watch: deque[tuple[str, Delivery]] = field(default_factory=deque)  # (what, delivery)
    evictions_done: deque[Callable[[], None]] = field(default_factory=deque)  # preemptions' API calls returning
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (pod, reason, message)
    terminate_victims_gracefully: bool = True  # victims keep running (deletionTimestamp set) until deleted

    # -- writes the test makes (as the e2e test's client does) ---------------------------
    def create(self, pod: PodInfo) -> None:
        self.pods[pod.uid] = pod
        self.watch.append((f"ADDED {pod.key}", lambda s: s.on_pod_add(pod)))

    def delete(self, uid: str) -> None:
        pod = self.pods.pop(uid, None)
        if pod is not None:
            self.watch.append((f"DELETED {pod.key}", lambda s: s.on_pod_delete(pod)))

    def modify(self, uid: str, what: str, **changes: Any) -> None:
        """Change fields of a stored pod (``PodInfo.copy_with``)."""
        old = self.pods.get(uid)
        if old is not None:
            self.replace(old.copy_with(**changes), what)

    def replace(self, new: PodInfo, what: str = "updated") -> None:
        """Store a new version of a pod (same uid), reported as MODIFIED."""
        old = self.pods[new.uid]
        self.pods[new.uid] = new
        self.watch.append((f"MODIFIED {old.key} {what}", lambda s: s.on_pod_update(old, new)))

    # -- the scheduler's calls (ClusterClient, VictimEvictor) ---------------------------
    def bind(self, pod: PodInfo, node_name: str) -> None:
        self.modify(pod.uid, f"bound to {node_name}", node_name=node_name, nominated_node_name="")

    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None:
        self.events.append((pod.key, reason, message))

    def update_pod_condition(self, pod: PodInfo, reason: str, message: str, nominated_node_name: str | None) -> None:
        stored = self.pods.get(pod.uid)
        if stored is not None and nominated_node_name is not None and nominated_node_name != stored.nominated_node_name:
            self.modify(pod.uid, f"nominated {nominated_node_name!r}", nominated_node_name=nominated_node_name)

    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node_name: str,
                    done: Callable[[bool], None] | None = None) -> None:
        if self.terminate_victims_gracefully:
            self.modify(victim.uid, "terminating", terminating=True)
        else:
            self.delete(victim.uid)
        if done is not None:
            self.evictions_done.append(lambda: done(True))

    def clear_nominated_node_name(self, pod: PodInfo) -> None:
        stored = self.pods.get(pod.uid)
        if stored is not None and stored.nominated_node_name:
            self.modify(pod.uid, "nomination cleared", nominated_node_name="")


class LiveLike:
    """A scheduler with the default configuration on a virtual clock, fed by ``api``'s watch."""

    def __init__(self, nodes: list[dict[str, Any]], config: dict[str, Any] | None = None,
                 run_binding: BindingRunner | None = None) -> None:
        self.clock = VirtualClock(1000.0)
        self.api = LiveLikeApi()
        raw = {"apiVersion": API_VERSION, "kind": KIND, **(config or {})}
        registry = in_tree_registry()
        self.scheduler = new_scheduler(parse_config(raw, registry), self.api, self.clock, registry,
                                       run_binding=run_binding)
        self.nodes: dict[str, Node] = {}
        for n in nodes:
            node = parse_node(n)
            self.nodes[node.name] = node
            self.scheduler.on_node_add(node)

    def add(self, raw: dict[str, Any]) -> PodInfo:
        pod = parse_pod(raw)
        self.api.create(pod)
        return pod

    def deliver(self, limit: int | None = None) -> int:
        """Report up to ``limit`` watch events (all by default), and the preemption calls
        that returned meanwhile; how many watch events went."""
        n = 0
        while self.api.watch and (limit is None or n < limit):
            _, delivery = self.api.watch.popleft()
            delivery(self.scheduler)
            n += 1
        while self.api.evictions_done:
            self.api.evictions_done.popleft()()
        return n

    def cycles(self, limit: int = 32) -> int:
        """Scheduling cycles back to back while pods are ready (the driver's turn)."""
        ran = 0
        while ran < limit and self.scheduler.queue.has_ready():
            self.scheduler.schedule_one()
            ran += 1
        return ran

    def run(self, seconds: float, between: Callable[[], None] | None = None) -> None:
        """The driver's loop for ``seconds`` of virtual time: cycles, the watch, flushes;
        ``between`` runs after each turn of cycles (a test's writes)."""
        deadline = self.clock.now() + seconds
        queue = self.scheduler.queue
        while True:
            queue.run_due_flushes()
            ran = self.cycles()
            if between is not None:
                between()
            moved = self.deliver()
            if ran or moved or queue.has_ready():
                continue
            wakeup = queue.next_wakeup()
            if wakeup is None or wakeup > deadline:
                self.clock.advance_to(deadline)
                queue.run_due_flushes()
                if not queue.has_ready():
                    return
                continue
            self.clock.advance_to(max(wakeup, self.clock.now() + 0.001))

    # -- reading ---------------------------------------------------------------------
    def remove_node(self, name: str) -> None:
        self.scheduler.on_node_delete(self.nodes.pop(name))

    def node_of(self, uid: str) -> str:
        return self.api.pods[uid].node_name

    def where(self, uid: str) -> str:
        return self.scheduler.queue.where(uid)
