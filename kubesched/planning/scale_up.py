"""The scale-up what-if: which pool, and how many of its nodes, would let the pods a run
left pending be scheduled, decided as cluster-autoscaler decides it, then checked by the
scheduler itself.

``plan_scale_up`` takes a simulation that has run (``simulate`` runs it first):

1. pools are found from the nodes' pool label and each gets a template node
   (``node_pools``);
2. the pods left unschedulable are grouped (``scale_up_groups``) and, for each pool
   that may grow (``scale_up_settings``: ``--max-nodes``, the pools file), cluster-
   autoscaler's binpacking estimate is made on the settled cluster
   (``scale_up_estimate``): how many new nodes, which pods they take;
3. the expanders choose among the pools that would take a pod (``expanders``);
4. the chosen pool's count is checked by real simulations of the settled cluster with
   that many new nodes (``scale_up_check``) and moved to the fewest nodes with which the
   scheduler places the pods the estimate promised (or as many as the cap allows): with
   the count reported every pod reported helped is placed, and with one node fewer one
   of them is not. ``check_all`` checks every other pool's estimate too (one simulation
   each).

Pods whose group no pool's template node takes are reported with the scheduler's own
message over the template nodes (``0/P nodes are available: ...``, one node per pool).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..cluster.simulated import Simulation, SimulationResult
from ..cluster.snapshot import ClusterSnapshot
from ..framework.config import SchedulerConfig
from ..framework.outcomes import FilterOutcome
from ..framework.registry import Registry
from ..objects.pod import PodInfo
from ..scheduler.fit_error import Diagnosis, FitError
from .expanders import DEFAULT_EXPANDER, Choice, Option, Priorities, choose
from .node_pools import DEFAULT_POOL_LABEL, NodePool, NodeTemplate, build_templates, discover_pools
from .scale_up_check import CheckedCount, ScaleUpCheck
from .scale_up_estimate import BinpackingEstimator, Estimate, GroupCheck
from .scale_up_groups import PodGroup, equivalence_groups
from .scale_up_settings import DEFAULT_MAX_NODES, PoolSettings, pool_cap, pool_price

__all__ = ["ScaleUpSpec", "ScaleUpPlan", "PoolPlan", "ScaleUpAnswer", "plan_scale_up", "pending_after"]


@dataclass(frozen=True, slots=True)
class ScaleUpSpec:
    """What to ask: the pool label, the expanders and their inputs, the caps."""

    pool_label: str = DEFAULT_POOL_LABEL
    expanders: tuple[str, ...] = (DEFAULT_EXPANDER,)
    priorities: Priorities | None = None
    max_nodes: int = DEFAULT_MAX_NODES
    settings: Mapping[str, PoolSettings] = field(default_factory=dict)
    price_label: str | None = None
    seed: int = 0  # the random expander's
    check_all: bool = False  # check every pool's estimate by a simulation, not only the chosen one's


@dataclass(slots=True)
class PoolPlan:
    """One pool: its template, what its template node takes, the estimate."""

    pool: str
    size: int  # nodes in the snapshot
    example: str  # the node its template copies
    good_example: bool
    template: NodeTemplate
    cap: int  # most new nodes
    price: float | None
    fits: list[str] = field(default_factory=list)  # pending pods whose group an empty template node takes
    estimate: Estimate | None = None  # None when the pool was not estimated (no room, nothing fits)
    checked: CheckedCount | None = None  # a simulation's count (the chosen pool, or every pool with check_all)
    option: Option | None = None  # what the expanders weighed (None: the pool offers nothing)

    @property
    def skipped(self) -> str:
        """Why the pool offers nothing ("" when it does)."""
        if self.cap <= 0:
            return "at its maximum size"
        if not self.fits:
            return "its template node takes none of the pending pods"
        if self.estimate is not None and not self.estimate.pods:
            return "the estimate placed no pod on its new nodes"
        return ""


@dataclass(slots=True)
class ScaleUpAnswer:
    """The chosen pool, and the count the scheduler confirmed."""

    pool: str
    node_count: int
    helped: list[str]  # pending pods the simulation with ``node_count`` new nodes places, in queue order
    new_nodes: list[str]  # their names, as the check named them
    estimated_nodes: int
    estimated_pods: list[str]
    missed: list[tuple[str, str]]  # estimated pods the scheduler left pending, with its message
    probes: list[tuple[int, int]]  # (new nodes, pods placed) of each simulation run
    capped: bool  # the cap stopped the search before every estimated pod was placed


@dataclass(slots=True)
class ScaleUpPlan:
    pool_label: str
    expanders: tuple[str, ...]
    pending: list[str]  # the pods the run left unschedulable, in queue order
    pools: list[PoolPlan]
    choice: Choice | None
    answer: ScaleUpAnswer | None
    no_pool: list[tuple[str, str]]  # pods no pool's template node takes, with the scheduler's message
    elsewhere: list[tuple[str, list[str]]]  # pods the chosen pool does not help that other pools' estimates take
    simulations: int = 0  # check simulations run
    seconds: float = 0.0  # in all
    estimate_seconds: float = 0.0  # of which the templates, groups and estimates
    priorities: Priorities | None = None  # the priority expander's, for the report


def pending_after(snapshot: ClusterSnapshot, result: SimulationResult) -> list[PodInfo]:
    """The pods ``result`` left unschedulable (not gated, not evicted), in queue order."""
    keys = [o.pod for o in result.unschedulable]
    by_key = {p.key: p for p in snapshot.pending_pods}
    return [by_key[k] for k in keys if k in by_key]


def plan_scale_up(sim: Simulation, result: SimulationResult, config: SchedulerConfig, registry: Registry | None,
                  spec: ScaleUpSpec, tie_break: str = "heap", seed: int | None = None) -> ScaleUpPlan:
    """The scale-up for the pods ``sim``'s run left pending (``sim`` has run to ``result``).

    Raises ``PoolError`` (no node has the pool label) and ``SettingsError`` (a price label
    that holds no number).
    """
    started = time.perf_counter()
    snapshot = sim.snapshot
    pools = discover_pools(snapshot.nodes, spec.pool_label)
    templates = build_templates(pools, snapshot.nodes, snapshot.bound_pods)
    pending = pending_after(snapshot, result)
    groups = equivalence_groups(pending)
    estimator = BinpackingEstimator(sim.scheduler)
    plans: list[PoolPlan] = []
    checks_by_pool: dict[str, list[GroupCheck]] = {}
    for pool in pools:
        plan = _pool_plan(pool, templates[pool.name], spec)
        plans.append(plan)
        if plan.cap <= 0 or not groups:
            continue
        checks = checks_by_pool[pool.name] = estimator.check_groups(plan.template, groups)
        fitting = [g for g, c in zip(groups, checks) if c.status is None]
        plan.fits = [p.key for g in fitting for p in g.pods]
        if not fitting:
            continue
        plan.estimate = estimator.estimate(plan.template, fitting, plan.cap)
        if plan.estimate.pods:
            plan.option = _option(plan, plan.estimate)
    estimated = time.perf_counter()
    options = [p.option for p in plans if p.option is not None]
    choice = choose(options, spec.expanders, spec.priorities, spec.seed) if options else None
    check = ScaleUpCheck(snapshot, result, config, registry, tie_break, seed)
    answer = None
    by_pool = {p.pool: p for p in plans}
    if choice is not None:
        answer = _answer(by_pool[choice.option.pool], check, [p.key for p in pending])
    if spec.check_all:
        for plan in plans:
            if plan.estimate is not None and plan.estimate.pods and plan.checked is None:
                placed = check.placed(plan.template, plan.estimate.node_count)
                plan.checked = CheckedCount(plan.estimate.node_count, placed,
                                            [(plan.estimate.node_count, len(placed))])
    order = {p.key: i for i, p in enumerate(pending)}
    no_pool = _no_pool(groups, pools, checks_by_pool)
    helped = set(answer.helped) if answer is not None else set()
    others: dict[str, list[str]] = {}
    for plan in plans:
        if plan.estimate is None or (answer is not None and plan.pool == answer.pool):
            continue
        for pod in plan.estimate.pods:
            if pod.key not in helped:
                others.setdefault(pod.key, []).append(plan.pool)
    elsewhere = sorted(others.items(), key=lambda kv: order.get(kv[0], 0))
    return ScaleUpPlan(spec.pool_label, spec.expanders, [p.key for p in pending], plans, choice, answer, no_pool,
                       elsewhere, check.runs, time.perf_counter() - started, estimated - started, spec.priorities)


def _pool_plan(pool: NodePool, template: NodeTemplate, spec: ScaleUpSpec) -> PoolPlan:
    return PoolPlan(pool.name, pool.size, pool.example, pool.good_example, template,
                    pool_cap(pool, spec.settings, spec.max_nodes),
                    pool_price(pool, template.node, spec.settings, spec.price_label))


def _option(plan: PoolPlan, estimate: Estimate) -> Option:
    node = plan.template.node
    cpu = sum(p.requests.requests.milli_cpu for p in estimate.pods)
    memory = sum(p.requests.requests.memory for p in estimate.pods)
    return Option(plan.pool, estimate.node_count, len(estimate.pods), cpu, memory, node.allocatable.milli_cpu,
                  node.allocatable.memory, plan.price)


def _answer(plan: PoolPlan, check: ScaleUpCheck, pending: list[str]) -> ScaleUpAnswer:
    estimate = plan.estimate
    assert estimate is not None
    estimated = frozenset(p.key for p in estimate.pods)
    checked = plan.checked = check.fewest_nodes(plan.template, estimated, estimate.node_count, plan.cap)
    order = [p.key for p in estimate.pods]
    helped = [k for k in pending if k in checked.helped]
    missed = [(k, check.message(plan.template, checked.node_count, k) or "not placed")
              for k in order if k not in checked.helped]
    new_nodes = [plan.template.instantiate(str(i))[0].name for i in range(checked.node_count)]
    return ScaleUpAnswer(plan.pool, checked.node_count, helped, new_nodes, estimate.node_count, order, missed,
                         checked.probes, checked.capped)


def _no_pool(groups: Sequence[PodGroup], pools: Sequence[NodePool],
             checks_by_pool: Mapping[str, list[GroupCheck]]) -> list[tuple[str, str]]:
    """Pods of the groups no pool's template node takes, with a ``FitError`` message over
    the template nodes (one per pool checked)."""
    checked = [p for p in pools if p.name in checks_by_pool]
    out: list[tuple[str, str]] = []
    for i, group in enumerate(groups):
        statuses = [checks_by_pool[p.name][i] for p in checked]
        if not statuses or any(s.status is None for s in statuses):
            continue
        message = template_message(group.exemplar, statuses)
        out.extend((pod.key, message) for pod in group.pods)
    return out


def template_message(pod: PodInfo, checks: Sequence[GroupCheck]) -> str:
    """The scheduler's ``0/N nodes are available: ...`` over one template node per check."""
    diagnosis = Diagnosis()
    statuses = [c.status for c in checks if c.status is not None]
    if all(c.pre_filter for c in checks) and statuses and len({s.message for s in statuses}) == 1:
        diagnosis.pre_filter_msg = statuses[0].message
        diagnosis.absent_status = statuses[0]
    else:
        index = np.arange(len(statuses), dtype=np.int32)
        diagnosis.outcome = FilterOutcome(index, statuses, np.zeros(len(statuses), dtype=bool))
        diagnosis.evaluated = np.arange(len(statuses), dtype=np.int64)
    return FitError(pod.key, len(checks), diagnosis).message()
