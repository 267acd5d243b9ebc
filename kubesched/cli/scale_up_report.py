"""``simulate --scale-up``: its options, and its part of the report as text, JSON (``scaleUp``
of ``--format json``) and the HTML page's section.

The options are read and checked before the snapshot is (a bad expander or file fails at
once); the pool label is checked against the snapshot before the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from ..cluster.snapshot import ClusterSnapshot
from ..planning.expanders import DEFAULT_EXPANDER, ExpanderError, describe, parse_expanders, read_priorities
from ..planning.node_pools import DEFAULT_POOL_LABEL, PoolError, discover_pools
from ..planning.scale_up import PoolPlan, ScaleUpPlan, ScaleUpSpec
from ..planning.scale_up_settings import (
    DEFAULT_MAX_NODES,
    PoolSettings,
    SettingsError,
    check_pools_named,
    pool_price,
    read_pool_settings,
)
from .common import fail

__all__ = ["ScaleUpFlags", "scale_up_options", "scale_up_spec", "check_pools", "render_scale_up", "scale_up_document"]

F = TypeVar("F", bound=Callable[..., Any])
SHOWN = 20  # pods listed per part of the text report


@dataclass(slots=True)
class ScaleUpFlags:
    scale_up: bool = False
    pool_label: str | None = None
    expander: str | None = None
    priorities: str | None = None
    max_nodes: int | None = None
    pools: str | None = None
    price_label: str | None = None
    check_all: bool = False

    @classmethod
    def pop(cls, kwargs: dict[str, Any]) -> "ScaleUpFlags":
        """The options ``scale_up_options`` added, taken out of a command's keyword arguments."""
        return cls(kwargs.pop("scale_up"), kwargs.pop("pool_label"), kwargs.pop("expander"),
                   kwargs.pop("expander_priorities"), kwargs.pop("max_nodes"), kwargs.pop("pools_file"),
                   kwargs.pop("price_label"), kwargs.pop("check_all_pools"))


def scale_up_options(command: F) -> F:
    options = [
        click.option("--scale-up", is_flag=True,
                     help="After the run: which node pool, and how many of its nodes, would let the pods left "
                          "unschedulable run, as cluster-autoscaler decides it, checked by simulation (see "
                          "docs/autoscaling.md)."),
        click.option("--pool-label", metavar="KEY",
                     help=f"The node label naming a node's pool (default {DEFAULT_POOL_LABEL}; e.g. "
                          "eks.amazonaws.com/nodegroup, cloud.google.com/gke-nodepool, karpenter.sh/nodepool)."),
        click.option("--expander", metavar="NAMES",
                     help=f"cluster-autoscaler's expander(s) choosing the pool, comma-separated (default "
                          f"{DEFAULT_EXPANDER}; most-pods, least-nodes, priority, price, random)."),
        click.option("--expander-priorities", metavar="FILE",
                     help="The priority expander's configuration: a cluster-autoscaler-priority-expander "
                          "ConfigMap, or its priorities (priority -> regular expressions on pool names)."),
        click.option("--max-nodes", type=click.IntRange(min=0), metavar="N",
                     help=f"The most new nodes per pool (default {DEFAULT_MAX_NODES}, cluster-autoscaler's "
                          "--max-nodes-per-scaleup)."),
        click.option("--pools", "pools_file", metavar="FILE",
                     help="Per-pool maxSize, maxNodes and price (YAML: pool name -> settings; \"*\" for the rest)."),
        click.option("--price-label", metavar="KEY",
                     help="A node label holding the price of one node of its pool, for the price expander."),
        click.option("--check-all-pools", is_flag=True,
                     help="Check every pool's estimate by a simulation, not only the chosen pool's."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def scale_up_spec(flags: ScaleUpFlags, seed: int | None) -> ScaleUpSpec | None:
    """The spec ``flags`` ask for (None without ``--scale-up``); bad input exits 2."""
    if not flags.scale_up:
        given = [name for name, value in (("--expander", flags.expander), ("--expander-priorities", flags.priorities),
                                          ("--max-nodes", flags.max_nodes), ("--pools", flags.pools),
                                          ("--price-label", flags.price_label), ("--check-all-pools", flags.check_all or None))
                 if value is not None]
        if given:
            fail([f"{given[0]} is an option of --scale-up: give --scale-up too"])
        return None
    try:
        expanders = parse_expanders(flags.expander) if flags.expander is not None else (DEFAULT_EXPANDER,)
        priorities = read_priorities(flags.priorities) if flags.priorities is not None else None
        settings: dict[str, PoolSettings] = read_pool_settings(flags.pools) if flags.pools is not None else {}
    except (ExpanderError, SettingsError) as err:
        fail(err.lines)
    if "priority" in expanders and priorities is None:
        fail(["--expander priority needs --expander-priorities FILE (its ConfigMap, or the priorities in it)"])
    if priorities is not None and "priority" not in expanders:
        fail(["--expander-priorities is read by the priority expander: name priority in --expander"])
    if "price" in expanders and flags.price_label is None and not any(s.price is not None for s in settings.values()):
        fail(["--expander price needs prices: --price-label KEY, or price in the --pools file"])
    return ScaleUpSpec(flags.pool_label or DEFAULT_POOL_LABEL, expanders, priorities,
                       flags.max_nodes if flags.max_nodes is not None else DEFAULT_MAX_NODES, settings,
                       flags.price_label, seed or 0, flags.check_all)


def check_pools(snapshot: ClusterSnapshot, spec: ScaleUpSpec, pools_file: str | None) -> None:
    """Before the run: the pool label names pools, the pools file names no other, prices read."""
    try:
        pools = discover_pools(snapshot.nodes, spec.pool_label)
        if pools_file is not None:
            check_pools_named(spec.settings, pools, pools_file)
        if spec.price_label is not None:
            by_name = {n.name: n for n in snapshot.nodes}
            for pool in pools:
                pool_price(pool, by_name[pool.example], spec.settings, spec.price_label)
    except (PoolError, SettingsError) as err:
        fail(err.lines)


# -- text ---------------------------------------------------------------------------------
def _nodes_pods(nodes: int, pods: int) -> str:
    return f"+{nodes} node(s), {pods} pod(s)"


def _estimate_cell(plan: PoolPlan) -> str:
    if plan.skipped:
        return plan.skipped
    assert plan.estimate is not None
    text = _nodes_pods(plan.estimate.node_count, len(plan.estimate.pods))
    return text + " (capped)" if plan.estimate.limited else text


def _checked_cell(plan: PoolPlan) -> str:
    if plan.checked is None:
        return ""
    return _nodes_pods(plan.checked.node_count, len(plan.checked.helped))


def _expander_cell(plan: PoolPlan, scale: ScaleUpPlan) -> str:
    if plan.option is None:
        return ""
    seen = describe(plan.option, scale.expanders, scale.priorities)
    parts = []
    if "waste" in seen:
        parts.append(f"waste {seen['waste']:.3f}")
    if "pricePerPod" in seen:
        parts.append(f"price/pod {seen['pricePerPod']:.4g}" if seen["pricePerPod"] is not None else "no price")
    if "priority" in seen:
        parts.append(f"priority {seen['priority']}" if seen["priority"] is not None else "no priority")
    return ", ".join(parts)


def _print(console: Console, text: str) -> None:
    console.print(text, highlight=False, markup=False)


def _listed(console: Console, items: list[str]) -> None:
    for item in items[:SHOWN]:
        _print(console, f"    {item}")
    if len(items) > SHOWN:
        _print(console, f"    and {len(items) - SHOWN} more")


def render_scale_up(console: Console, scale: ScaleUpPlan) -> None:
    """The scale-up part of the text report."""
    chain = ",".join(scale.expanders)
    _print(console, f"Scale-up: {len(scale.pending)} pod(s) left unschedulable; pools by {scale.pool_label}, "
                    f"expander {chain}")
    if not scale.pending:
        return
    chosen = scale.answer.pool if scale.answer is not None else None
    table = Table(show_edge=True)
    for column in ("POOL", "NODES", "MAX NEW", "TEMPLATE", "PODS FIT", "ESTIMATE", "CHECKED", "EXPANDER", ""):
        table.add_column(column, justify="right" if column in ("NODES", "MAX NEW", "PODS FIT") else "left")
    for plan in scale.pools:
        example = plan.example if plan.good_example else f"{plan.example} (cordoned or not ready)"
        table.add_row(plan.pool, str(plan.size), str(plan.cap), example, str(len(plan.fits)), _estimate_cell(plan),
                      _checked_cell(plan), _expander_cell(plan, scale), "chosen" if plan.pool == chosen else "")
    console.print(table)
    answer = scale.answer
    if answer is None:
        _print(console, "No pool's new nodes would take a pending pod: no scale-up.")
    else:
        assert scale.choice is not None
        how = (f"chosen by {scale.choice.decided_by}" if scale.choice.decided_by != "pool name"
               else "the expanders left a tie, broken by pool name")
        _print(console, f"Chosen: {answer.pool} ({how}): add {answer.node_count} node(s), which place "
                        f"{len(answer.helped)} pending pod(s)")
        runs = ", ".join(f"{nodes} -> {placed}" for nodes, placed in answer.probes)
        _print(console, f"  cluster-autoscaler's estimate: {answer.estimated_nodes} node(s) for "
                        f"{len(answer.estimated_pods)} pod(s); simulated (new nodes -> pods placed): {runs}")
        if answer.capped:
            _print(console, f"  the pool's cap ({next(p.cap for p in scale.pools if p.pool == answer.pool)} new "
                            "nodes) is too low for every estimated pod")
        _print(console, f"  new nodes: {', '.join(answer.new_nodes[:5])}"
                        + (f" and {len(answer.new_nodes) - 5} more" if len(answer.new_nodes) > 5 else ""))
        _print(console, "  pods helped:")
        _listed(console, answer.helped)
        if answer.missed:
            _print(console, f"  {len(answer.missed)} estimated pod(s) the scheduler still leaves pending:")
            _listed(console, [f"{pod}: {why}" for pod, why in answer.missed])
    if scale.elsewhere:
        _print(console, f"Pods only other pools would help ({len(scale.elsewhere)}):")
        _listed(console, [f"{pod}: {', '.join(pools)}" for pod, pools in scale.elsewhere])
    if scale.no_pool:
        by_reason: dict[str, list[str]] = {}
        for pod, why in scale.no_pool:
            by_reason.setdefault(why, []).append(pod)
        _print(console, f"Pods no pool helps ({len(scale.no_pool)}), by the scheduler's message on the template nodes:")
        for why, pods in by_reason.items():
            shown = ", ".join(pods[:3]) + (f" and {len(pods) - 3} more" if len(pods) > 3 else "")
            _print(console, f"  {shown}: {why}")


# -- JSON ---------------------------------------------------------------------------------
def _pool_document(plan: PoolPlan, scale: ScaleUpPlan) -> dict[str, Any]:
    estimate = plan.estimate
    return {
        "pool": plan.pool,
        "nodes": plan.size,
        "example": plan.example,
        "goodExample": plan.good_example,
        "templateNode": plan.template.node.name,
        "templatePods": [p.key for p in plan.template.pods],
        "maxNewNodes": plan.cap,
        "price": plan.price,
        "podsFit": plan.fits,
        "estimate": None if estimate is None else {
            "nodes": estimate.node_count, "pods": [p.key for p in estimate.pods], "capped": estimate.limited},
        "checked": None if plan.checked is None else {
            "nodes": plan.checked.node_count, "pods": sorted(plan.checked.helped)},
        "skipped": plan.skipped,
        "expander": describe(plan.option, scale.expanders, scale.priorities) if plan.option is not None else None,
    }


def scale_up_document(scale: ScaleUpPlan) -> dict[str, Any]:
    answer = scale.answer
    choice = scale.choice
    return {
        "poolLabel": scale.pool_label,
        "expanders": list(scale.expanders),
        "pending": scale.pending,
        "pools": [_pool_document(p, scale) for p in scale.pools],
        "choice": None if choice is None else {
            "pool": choice.option.pool, "decidedBy": choice.decided_by,
            "kept": [{"expander": name, "pools": list(pools)} for name, pools in choice.kept]},
        "answer": None if answer is None else {
            "pool": answer.pool, "nodes": answer.node_count, "pods": answer.helped, "newNodes": answer.new_nodes,
            "estimate": {"nodes": answer.estimated_nodes, "pods": answer.estimated_pods},
            "missed": [{"pod": pod, "message": why} for pod, why in answer.missed],
            "simulations": [{"nodes": nodes, "placed": placed} for nodes, placed in answer.probes],
            "capped": answer.capped},
        "noPool": [{"pod": pod, "message": why} for pod, why in scale.no_pool],
        "otherPools": [{"pod": pod, "pools": pools} for pod, pools in scale.elsewhere],
        "simulations": scale.simulations,
        "seconds": round(scale.seconds, 3),
        "estimateSeconds": round(scale.estimate_seconds, 3),
    }
