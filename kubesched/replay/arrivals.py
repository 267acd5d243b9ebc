"""In which order a trace's pods arrive (and leave).

* ``fgd_arrivals``: the FGD paper's protocol. The trace's pods in a random order, then
  pods drawn at random from the trace (copies, named ``<pod>-tuned-<n>`` as in the
  paper's simulator), until the next pod would take the GPU requested past ``target``
  times the cluster's GPUs. Pods never leave.
* ``timeline_events``: each pod arrives at its creation time and leaves at its
  deletion time; at equal times departures go first (they free room for arrivals).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .trace import ReplayPod

__all__ = ["ARRIVE", "LEAVE", "Arrival", "fgd_arrivals", "timeline_events"]

LEAVE = 0
ARRIVE = 1


@dataclass(frozen=True, slots=True)
class Arrival:
    pod: ReplayPod
    name: str  # unique in the replay (copies of a pod get their own)


def fgd_arrivals(pods: tuple[ReplayPod, ...], capacity_milli: int, target: float, rng: random.Random) -> list[Arrival]:
    limit = target * capacity_milli
    order = list(range(len(pods)))
    rng.shuffle(order)
    out: list[Arrival] = []
    requested = 0
    for i in order:
        if requested + pods[i].gpu_milli > limit:
            return out
        requested += pods[i].gpu_milli
        out.append(Arrival(pods[i], pods[i].info.name))
    if not any(p.gpu_milli for p in pods):
        return out  # no GPU requests: no amount of copies reaches the target
    copy = 0
    while True:
        pod = pods[rng.randrange(len(pods))]
        if requested + pod.gpu_milli > limit:
            return out
        requested += pod.gpu_milli
        out.append(Arrival(pod, f"{pod.info.name}-tuned-{copy}"))
        copy += 1


def timeline_events(pods: tuple[ReplayPod, ...]) -> list[tuple[float, int, int]]:
    """``(time, LEAVE or ARRIVE, pod index)`` in the order to replay them."""
    events = [(p.created, ARRIVE, i) for i, p in enumerate(pods)]
    events += [(p.deleted, LEAVE, i) for i, p in enumerate(pods) if p.deleted is not None]
    events.sort()
    return events
