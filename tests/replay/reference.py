"""The FGD paper's definitions written plainly, one node at a time, as its simulator states
them (hkust-adsl/kubernetes-scheduler-simulator): the tests hold the vectorised plugins
to these.

A node is ``(cpu_left, free, model)`` with ``free`` the free milli-GPU of each device; a
pod is ``(cpu, milli, count, models)`` with ``milli`` per device (1000 for whole GPUs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MILLI = 1000
MAX_CPU = 128_000
MAX_GPU = 8_000


@dataclass(frozen=True)
class Node:
    cpu_left: int
    free: tuple[int, ...]
    model: str = ""
    kinds: frozenset[str] = frozenset()  # GpuClustering: kinds of the GPU pods on the node


@dataclass(frozen=True)
class Pod:
    cpu: int
    milli: int
    count: int
    models: frozenset[str] = frozenset()

    @property
    def share(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    @property
    def total(self) -> int:
        return self.milli * self.count

    @property
    def kind(self) -> str:
        return "share" if self.share else f"{self.count}-gpu"


# -- fragmentation --------------------------------------------------------------------
def can_host(node: Node, pod: Pod) -> bool:
    return sum(1 for f in node.free if f >= pod.milli) >= pod.count


def node_fragmentation(node: Node, typical: list[tuple[Pod, float]]) -> float:
    """Per typical pod: all free GPU is fragment unless the pod could run on the node, in
    which case only devices too full for it are; weighted by frequency."""
    total = sum(node.free)
    weight = sum(w for _, w in typical)
    frag = 0.0
    for pod, w in typical:
        runs = (pod.milli > 0 and (not pod.models or node.model in pod.models)
                and can_host(node, pod) and node.cpu_left >= pod.cpu)
        frag += w * (sum(f for f in node.free if f < pod.milli) if runs else total)
    return frag / weight


def take(node: Node, pod: Pod, devices: tuple[int, ...]) -> Node:
    free = list(node.free)
    for d in devices:
        free[d] -= pod.milli
    return Node(node.cpu_left - pod.cpu, tuple(free), node.model, node.kinds)


def idle_devices(node: Node, count: int) -> tuple[int, ...]:
    return tuple([d for d, f in enumerate(node.free) if f == MILLI][:count])


def best_fit_device(node: Node, pod: Pod) -> int:
    fitting = [d for d, f in enumerate(node.free) if f >= pod.milli]
    return min(fitting, key=lambda d: (node.free[d], d))


# -- the six policies --------------------------------------------------------------------
def fgd(node: Node, pod: Pod, typical: list[tuple[Pod, float]]) -> tuple[int, int | None]:
    """(score, device for a share): sigmoid of the fragmentation drop, best device first."""
    before = node_fragmentation(node, typical)

    def score(after: Node) -> int:
        return int(1 / (1 + math.exp(-(before - node_fragmentation(after, typical)) / 1000)) * 100)

    if pod.share:
        options = [(score(take(node, pod, (d,))), -d) for d, f in enumerate(node.free) if f >= pod.milli]
        best, device = max(options)
        return best, -device
    return score(take(node, pod, idle_devices(node, pod.count))), None


def best_fit(node: Node, pod: Pod) -> int:
    left = (node.cpu_left - pod.cpu) / MAX_CPU * 0.5 + (sum(node.free) - pod.total) / MAX_GPU * 0.5
    return int((1 - left) * 100)


def dot_product(node: Node, pod: Pod) -> int:
    if node.cpu_left < pod.cpu:
        return 0
    dot = (node.cpu_left / MAX_CPU) * (pod.cpu / MAX_CPU) + (sum(node.free) / MAX_GPU) * (pod.total / MAX_GPU)
    return int(100 * (1 - dot / 2))


def gpu_packing(node: Node, pod: Pod) -> int:
    if pod.count == 0:
        return 0
    idle = sum(1 for f in node.free if f == MILLI)
    if idle == len(node.free):
        return max(100 // 3 - idle, idle)
    used, need = [], pod.count
    for d in sorted(range(len(node.free)), key=lambda d: node.free[d]):
        if need and node.free[d] >= pod.milli:
            used.append(d)
            need -= 1
    idle_used = sum(1 for d in used if node.free[d] == MILLI)
    if idle_used:
        return max(100 // 2 - idle_used, 100 // 3)
    return max(100 - sum(node.free[d] * 100 // MILLI for d in used) // 10, 100 // 2)


def gpu_clustering(node: Node, pod: Pod) -> int:
    if pod.count == 0:
        return 0
    fullness = int(25 * (MAX_GPU - sum(node.free)) / MAX_GPU)
    if pod.kind in node.kinds:
        return fullness + (75 if len(node.kinds) == 1 else 50)
    return fullness + (25 if not node.kinds else 0)


def normalize(scores: list[int]) -> list[int]:
    """BestFit's NormalizeScore: lowest 0, highest 100; all 0 on a tie."""
    low, high = min(scores), max(scores)
    return [0 if high == low else (s - low) * 100 // (high - low) for s in scores]
