"""The check of a scale-up by a real simulation: the cluster as the run left it, with the
pool's new nodes added, scheduled again until the queue settles.

"As the run left it": the pods the run placed are bound where it placed them and the pods
its preemptions evicted are gone; the pods still pending are pending again. That is the
cluster a scale-up meets (the pods that fit are bound long before a new node is ready),
and the pods those nodes help are the pending ones the simulation places. Each check is
a fresh ``Simulation`` over the same parsed objects (nothing is read or parsed again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..cluster.simulated import Simulation, SimulationResult
from ..cluster.snapshot import ClusterSnapshot
from ..framework.config import SchedulerConfig
from ..framework.registry import Registry
from ..objects.node import Node
from ..objects.pod import PodInfo
from .node_pools import NodeTemplate

__all__ = ["ScaleUpCheck", "CheckedCount", "settled_snapshot", "with_new_nodes"]


def settled_snapshot(snapshot: ClusterSnapshot, result: SimulationResult) -> ClusterSnapshot:
    """``snapshot`` after ``result``: placed pods bound, evicted pods gone, the rest pending."""
    placed = {key: outcome.node for key, outcome in result.outcomes.items() if outcome.node}
    evicted = {victim for victim, _, _ in result.preemptions}
    bound = [p for p in snapshot.bound_pods if p.key not in evicted]
    pending: list[PodInfo] = []
    for pod in snapshot.pending_pods:
        node = placed.get(pod.key)
        if node is None:
            if pod.key not in evicted or pod.key in result.outcomes:
                pending.append(pod)
        else:
            bound.append(_bound(pod, node))
    return replace(snapshot, bound_pods=bound, pending_pods=pending)


def with_new_nodes(snapshot: ClusterSnapshot, template: NodeTemplate, count: int) -> tuple[ClusterSnapshot, list[str]]:
    """``snapshot`` with ``count`` new nodes of ``template`` (and their DaemonSet and mirror
    pods), named as the estimate names them; and their names."""
    nodes: list[Node] = []
    pods: list[PodInfo] = []
    for i in range(count):
        node, node_pods = template.instantiate(str(i))
        nodes.append(node)
        pods.extend(node_pods)
    edited = replace(snapshot, nodes=[*snapshot.nodes, *nodes], bound_pods=[*snapshot.bound_pods, *pods])
    return edited, [n.name for n in nodes]


def _bound(pod: PodInfo, node: str) -> PodInfo:
    raw = pod.raw
    if raw is not None:
        raw = {**raw, "spec": {**dict(raw.get("spec") or {}), "nodeName": node}}
    return pod.copy_with(node_name=node, nominated_node_name="", raw=raw)


@dataclass(slots=True)
class CheckedCount:
    """The count a real simulation confirmed: ``node_count`` new nodes place every pod of
    ``helped`` and ``node_count - 1`` leave one of them pending."""

    node_count: int
    helped: frozenset[str]
    probes: list[tuple[int, int]] = field(default_factory=list)  # (new nodes, pending pods placed), as simulated
    capped: bool = False  # the cap stopped the search before every estimated pod was placed


class ScaleUpCheck:
    """Simulations of the settled cluster with new nodes of one pool; ``placed(template, n)``
    is the set of pending pods (keys) that one with ``n`` new nodes places, memoised."""

    def __init__(self, snapshot: ClusterSnapshot, result: SimulationResult, config: SchedulerConfig,
                 registry: Registry | None, tie_break: str = "heap", seed: int | None = None) -> None:
        self.settled = settled_snapshot(snapshot, result)
        self._config = config
        self._registry = registry
        self._tie_break = tie_break
        self._seed = seed
        self._memo: dict[tuple[str, int], frozenset[str]] = {}
        self._messages: dict[tuple[str, int], dict[str, str]] = {}
        self.runs = 0  # simulations run, for the report

    def placed(self, template: NodeTemplate, count: int) -> frozenset[str]:
        key = (template.pool, count)
        found = self._memo.get(key)
        if found is not None:
            return found
        if count == 0:
            placed: frozenset[str] = frozenset()
        else:
            edited, _ = with_new_nodes(self.settled, template, count)
            sim = Simulation(edited, self._config, self._registry, tie_break=self._tie_break, seed=self._seed)
            result = sim.run()
            self.runs += 1
            placed = frozenset(k for k, outcome in result.outcomes.items() if outcome.node)
            self._messages[key] = {k: outcome.message for k, outcome in result.outcomes.items() if not outcome.node}
        self._memo[key] = placed
        return placed

    def message(self, template: NodeTemplate, count: int, pod: str) -> str:
        """Why ``pod`` stayed pending in the simulation with ``count`` new nodes."""
        return self._messages.get((template.pool, count), {}).get(pod, "")

    def fewest_nodes(self, template: NodeTemplate, estimated: frozenset[str], start: int, cap: int) -> CheckedCount:
        """The fewest new nodes with which the scheduler places the estimated pods, from the
        estimate ``start``, never above ``cap``; when ``cap`` nodes do not place them all, the
        fewest that place as many as any count simulated.

        Up from ``start`` by growing steps, then halving back; down by the same steps while
        fewer nodes still place what more placed. The count returned is confirmed both
        ways: with it every pod of ``helped`` is placed, with one node fewer one is not.
        """
        probes: dict[int, frozenset[str]] = {}

        def placed(n: int) -> frozenset[str]:
            if n not in probes:
                probes[n] = self.placed(template, n)
            return probes[n]

        n = max(1, min(start, cap))
        capped = False
        if not estimated <= placed(n):
            # The first step in proportion to what is missing (the nodes' share of the pods
            # placed), then doubling: a few simulations whether the estimate is off by one
            # node or by a third.
            found = len(estimated & placed(n))
            step = max(1, -(-n * (len(estimated) - found) // found)) if found else n
            low, high = n, None
            while low < cap:
                probe = min(n + step, cap)
                if estimated <= placed(probe):
                    high = probe
                    break
                low, step = probe, step * 2
            if high is None:
                capped = True
                best = max(len(p) for p in probes.values())
                n = min(k for k, p in probes.items() if len(p) == best)
            else:
                n = _smallest(low, high, lambda k: estimated <= placed(k))
        target = placed(n)
        if target:
            n = self._fewer(n, target, placed)
        helped = placed(n) if target else frozenset()
        return CheckedCount(n if helped else 0, helped, sorted((k, len(p)) for k, p in probes.items()), capped)

    @staticmethod
    def _fewer(n: int, target: frozenset[str], placed: Callable[[int], frozenset[str]]) -> int:
        """From ``n``, whose simulation places ``target``: the fewest nodes that still place
        what they replace, checked one node below."""
        while n > 1 and target <= placed(n - 1):
            low, step = n - 1, 2
            while low - step >= 1 and target <= placed(low - step):
                low -= step
                step *= 2
            floor = max(0, low - step)
            n = _smallest(floor, low, lambda k: k > 0 and target <= placed(k))
            target = placed(n)
        return n


def _smallest(low: int, high: int, holds: Callable[[int], bool]) -> int:
    """The smallest ``k`` in ``(low, high]`` with ``holds(k)``, given ``holds(high)``, by halving."""
    while high - low > 1:
        mid = (low + high) // 2
        if holds(mid):
            high = mid
        else:
            low = mid
    return high
