"""``EventLog``: what a recorded replay keeps as it goes (``run_replay(spec, record=True)``):
every pod's events (``PodEvent``) and the cluster after each event (``SeriesPoint``,
appended by the engine, which reads the node table and the GPU devices)."""

from __future__ import annotations

from kubesched.cluster.simulated import fit_message
from kubesched.objects import PodInfo
from kubesched.scheduler.attempt import Attempt

from .events import PodEvent, SeriesPoint

__all__ = ["EventLog"]


class EventLog:
    """Every pod's events and the cluster after each event, as the replay goes (``record``)."""

    def __init__(self, capacity_milli: int) -> None:
        self.capacity = capacity_milli
        self.pods: dict[str, PodEvent] = {}  # by uid, in arrival order
        self.series: list[SeriesPoint] = []
        self.running = 0
        self.pending = 0
        self.failed = 0
        self.arrived_milli = 0

    def arrived(self, pod: PodInfo, gpu_milli: int, now: float) -> None:
        self.pods[pod.uid] = PodEvent(pod.name, len(self.pods), now, pod.requests.requests.milli_cpu, gpu_milli)
        self.pending += 1
        self.arrived_milli += gpu_milli

    def attempted(self, attempt: Attempt) -> None:
        event = self.pods.get(attempt.pod.uid)
        if event is not None:
            event.attempts += 1
            if attempt.result is None:
                event.failure = fit_message(attempt.error)

    def bound(self, uid: str, now: float, node: str, devices: tuple[int, ...]) -> None:
        event = self.pods.get(uid)
        if event is not None:
            event.bound, event.node, event.failure = now, node, ""
            event.gpu_devices = "|".join(str(d) for d in devices)
            self.pending -= 1
            self.running += 1

    def left(self, uid: str, now: float, was_bound: bool, why: str) -> None:
        event = self.pods.get(uid)
        if event is None:
            return
        event.departure = now
        if was_bound:
            self.running -= 1
        else:
            self.pending -= 1
            self.failed += 1
            event.failure = f"{why}: {event.failure}" if event.failure else why

    def still_pending(self) -> None:
        """The trace ended: pods never bound and still waiting are failures too."""
        for event in self.pods.values():
            if event.bound is None and event.departure is None:
                self.pending -= 1
                self.failed += 1
                event.failure = f"still pending when the trace ended: {event.failure}" if event.failure \
                    else "still pending when the trace ended"
