"""Check (v): a signing plugin's signature covers every pod field its answers read.

OpportunisticBatching gives a pod its twin's next node when their signatures are equal,
trusting that the plugins would answer both pods alike on every node. So for a plugin
with ``sign_pod``: take a pod, give it one field of another pod (its labels, requests,
tolerations, node affinity, volumes ...); when the plugin signs the changed pod as it
signed the original, its PreFilter, Filter, PreScore and Score answers on every node
must be the original's. A difference means the plugin reads a field its fragments do
not cover: batching would reuse a result that does not hold for the pod.

An in-tree plugin that signs a field only in part because upstream's does (host ports
without their IP and protocol, requests without the scoring defaults) declares it in
``upstream_unsigned_reads`` (``framework.signing.UnsignedRead``): for that field the two
pods are compared with the declared part erased in both, so the rest must be signed. A
plugin that declares nothing is held to every field in full.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

import numpy as np

from ..framework.interfaces import BatchFilterPlugin, BatchScorePlugin, FilterPlugin, Plugin, ScorePlugin
from ..framework.registry import PluginSpec
from ..framework.signing import SignPlugin, SignValue, UnsignedRead
from ..objects.pod import PodInfo
from ._support import (
    ContractError,
    ContractReport,
    as_scores,
    build,
    call,
    clusters_or_default,
    decode,
    new_state,
    pre_filter,
    prepare_scoring,
    verdict,
)
from .clusters import RandomCluster

__all__ = ["assert_signature_covers_reads", "POD_FIELDS"]

A = TypeVar("A")

# The PodInfo fields a plugin may read, each swapped in from another pod of the cluster.
POD_FIELDS = (
    "labels",
    "namespace",
    "annotations",
    "node_name",
    "scheduler_name",
    "priority",
    "requests",
    "host_ports",
    "init_host_ports",
    "tolerations",
    "node_selector",
    "required_node_affinity",
    "preferred_node_affinity",
    "pod_affinity",
    "topology_spread_constraints",
    "images",
    "volume_images",
    "volumes",
    "owner_references",
    "preemption_policy",
)

Answers = tuple[object, ...]


def assert_signature_covers_reads(
    spec: PluginSpec[A],
    args: object = None,
    clusters: Sequence[RandomCluster] | None = None,
    *,
    fields: Sequence[str] = POD_FIELDS,
) -> ContractReport:
    """For every pod of every cluster and every field in ``fields``: the pod with that field
    taken from another pod, if the plugin signs it the same, gets the same Filter verdicts
    and Score scores on every node; for a field the plugin declares in
    ``upstream_unsigned_reads``, once the declared part is erased in both pods. Fails if the
    plugin does not sign, or if no pod with a changed field kept its signature (nothing
    compared)."""
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    report = ContractReport(spec.name, ["signature covers what the plugin reads"], clusters=len(found))
    if not isinstance(build(spec, decoded, found[0]), SignPlugin):
        raise ContractError(f"plugin {spec.name} has no sign_pod: there is no signature to check")
    compared = 0
    erased: dict[str, int] = {}
    for cluster in found:
        plugin = build(spec, decoded, cluster)
        assert isinstance(plugin, SignPlugin)
        unsigned = unsigned_reads(plugin)
        donors = list(cluster.pods) + [p for info in cluster.cache.nodes.values() for p in info.pods.values()]
        rng = cluster.rng(f"signature/{spec.name}")
        for pod in cluster.pods:
            report.pods += 1
            signed = _signature(plugin, pod, cluster)
            if signed is None:
                continue
            base: Answers | None = None
            for field_name in fields:
                other = donors[rng.randrange(len(donors))] if donors else pod
                value = getattr(other, field_name)
                if value == getattr(pod, field_name):
                    continue
                changed = pod.copy_with(**{field_name: value})
                if _signature(plugin, changed, cluster) != signed:
                    continue  # the field is covered: the pods are not batched together
                compared += 1
                known = unsigned.get(field_name, ())
                if known:  # compare with the part upstream leaves unsigned made canonical in both
                    want = _answers(plugin, _erase(pod, known), cluster, report)
                    got = _answers(plugin, _erase(changed, known), cluster, report)
                    erased[field_name] = erased.get(field_name, 0) + 1
                else:
                    if base is None:
                        base = _answers(plugin, pod, cluster, report)
                    want = base
                    got = _answers(plugin, changed, cluster, report)
                if got != want:
                    raise ContractError(
                        f"plugin {spec.name}: pod {pod.key} with {field_name} of pod {other.key} keeps its signature "
                        f"but gets other answers on {cluster.describe()}: the plugin reads {field_name} and its "
                        f"sign_pod does not cover it{' (even with its declared unsigned part erased)' if known else ''} "
                        f"(add a SignFragment for it, or refuse to sign such pods)")
    if not compared:
        raise ContractError(f"plugin {spec.name}: no pod kept its signature with a field changed, so nothing was "
                            f"compared; use clusters whose pods differ in fields the plugin does not read")
    report.notes.append(f"{compared} pods with a changed field kept their signature and their answers")
    for field_name, count in sorted(erased.items()):
        reasons = "; ".join(r.reason for r in unsigned_reads(build(spec, decoded, found[0])).get(field_name, ()))
        report.notes.append(f"{count} of them compared on {field_name} without the part upstream leaves unsigned: {reasons}")
    return report


def unsigned_reads(plugin: object) -> dict[str, tuple[UnsignedRead, ...]]:
    """The plugin's declared ``upstream_unsigned_reads``, by field; a declaration that is not
    a tuple of ``UnsignedRead`` fails (a typo must not silently weaken the check)."""
    declared = getattr(plugin, "upstream_unsigned_reads", ())
    if not isinstance(declared, tuple) or not all(isinstance(d, UnsignedRead) for d in declared):
        raise ContractError(f"plugin {getattr(plugin, 'name', plugin)!r}: upstream_unsigned_reads must be a tuple of "
                            f"UnsignedRead, got {declared!r}")
    out: dict[str, tuple[UnsignedRead, ...]] = {}
    for d in declared:
        if d.field not in POD_FIELDS:
            raise ContractError(f"plugin {getattr(plugin, 'name', plugin)!r}: upstream_unsigned_reads names "
                                f"{d.field!r}, not a pod field the check swaps ({', '.join(POD_FIELDS)})")
        out[d.field] = out.get(d.field, ()) + (d,)
    return out


def _erase(pod: PodInfo, known: tuple[UnsignedRead, ...]) -> PodInfo:
    for d in known:
        pod = d.erase(pod)
    return pod


def _signature(plugin: SignPlugin, pod: PodInfo, cluster: RandomCluster) -> tuple[tuple[str, SignValue], ...] | None:
    fragments, status = call(plugin, "sign_pod", cluster, pod, lambda: plugin.sign_pod(pod))
    if status is not None and not status.is_success():
        return None
    return tuple(sorted((f.key, f.value) for f in fragments))


def _answers(plugin: Plugin, pod: PodInfo, cluster: RandomCluster, report: ContractReport) -> Answers:
    """The plugin's Filter verdicts and Score scores for the pod on every live node."""
    snapshot = cluster.snapshot
    rows = cluster.rows()
    out: list[object] = []
    if isinstance(plugin, (BatchFilterPlugin, FilterPlugin)):
        state = new_state()
        runs, candidates = pre_filter(plugin, state, pod, cluster)
        if not runs:
            out.append(("prefilter", tuple(candidates.tolist())))
        elif isinstance(plugin, BatchFilterPlugin):
            asked = candidates.copy()
            asked.flags.writeable = False
            verdicts = call(plugin, "filter_nodes", cluster, pod, lambda: plugin.filter_nodes(state, pod, snapshot, asked))
            for row in np.flatnonzero(candidates).tolist():
                code = int(verdicts.codes[row])
                out.append((row, verdict(verdicts.statuses[code - 1] if code else None)))
        else:
            single: FilterPlugin = plugin
            for row in np.flatnonzero(candidates).tolist():
                info = cluster.node_info(row)
                out.append((row, verdict(call(plugin, "filter", cluster, pod, lambda: single.filter(state, pod, info)))))
        report.filter_rows_compared += int(candidates.sum())
    if isinstance(plugin, (BatchScorePlugin, ScorePlugin)):
        state = new_state()
        if not prepare_scoring(plugin, state, pod, rows, cluster):
            out.append("no scoring")
        else:
            scores: Callable[[], object]
            if isinstance(plugin, BatchScorePlugin):
                batch: BatchScorePlugin = plugin
                scores = lambda: batch.score_nodes(state, pod, snapshot, rows)  # noqa: E731
            else:
                per_node: ScorePlugin = plugin
                scores = lambda: [per_node.score(state, pod, cluster.node_info(r)) for r in rows.tolist()]  # noqa: E731
            got = as_scores(plugin.name, call(plugin, "score", cluster, pod, scores), len(rows), pod, cluster)
            out.append(tuple(got.tolist()))
            report.score_rows_compared += len(rows)
    return tuple(out)
