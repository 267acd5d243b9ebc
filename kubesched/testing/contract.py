"""``assert_plugin_contract``: every contract check that applies to a plugin.

The checks live one per module (``declarations``, ``forms``, ``scores``, ``unreserve``);
each builds the plugin from its ``PluginSpec`` on every random cluster with the cluster's
handle, calls it as the framework would, and raises ``ContractError`` (an
``AssertionError``) at the first breach, naming the plugin, pod, node and the cluster to
rebuild. Each returns a ``ContractReport`` of what it compared, and fails rather than
pass having compared nothing.
"""

from __future__ import annotations

from typing import Iterable, Sequence, TypeVar

from ..framework.interfaces import (
    BatchFilterPlugin,
    BatchScorePlugin,
    FilterPlugin,
    PermitPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    ReservePlugin,
    ScorePlugin,
)
from ..framework.placement import PlacementGeneratePlugin, PlacementScorePlugin
from ..framework.registry import PluginSpec
from ..framework.signing import SignPlugin
from ._support import ContractReport, build, clusters_or_default, decode
from .clusters import RandomCluster
from .declarations import assert_declarations
from .extensions import assert_pre_filter_extensions_agree
from .forms import assert_forms_agree
from .permit import assert_permit_answers
from .placement import assert_placement_contract
from .scores import assert_scores_in_range
from .signatures import assert_signature_covers_reads
from .unreserve import assert_unreserve_idempotent

__all__ = ["assert_plugin_contract"]

A = TypeVar("A")


def assert_plugin_contract(
    spec: PluginSpec[A],
    args: object = None,
    points: Iterable[str] = (),
    clusters: Sequence[RandomCluster] | None = None,
    *,
    require_rejections: bool = True,
    require_score_variety: bool = True,
) -> ContractReport:
    """Every check that applies to the plugin: declarations (always), both forms agreeing
    (when it has both forms of Filter or Score), scores in range (when it scores),
    Unreserve idempotent (when it reserves), Permit's answers (when it permits),
    PreFilterExtensions agreeing with a fresh PreFilter (when it has them), its signature
    covering what it reads (when it signs pods), its placements and placement scores (when
    it generates or scores placements for pod groups). Returns what was compared."""
    found = clusters_or_default(clusters)
    report = assert_declarations(spec, args, points, found)
    probe = build(spec, decode(spec, args), found[0])
    if (isinstance(probe, BatchFilterPlugin) and isinstance(probe, FilterPlugin)) or (
        isinstance(probe, BatchScorePlugin) and isinstance(probe, ScorePlugin)
    ):
        report.merge(assert_forms_agree(spec, args, found, require_rejections=require_rejections,
                                        require_score_variety=require_score_variety))
    if isinstance(probe, (BatchScorePlugin, ScorePlugin)):
        report.merge(assert_scores_in_range(spec, args, found))
    if isinstance(probe, ReservePlugin):
        report.merge(assert_unreserve_idempotent(spec, args, found))
    if isinstance(probe, PermitPlugin):
        report.merge(assert_permit_answers(spec, args, found))
    if isinstance(probe, PreFilterPlugin) and isinstance(probe, PreFilterExtensions):
        report.merge(assert_pre_filter_extensions_agree(spec, args, found, require_changes=False))
    if isinstance(probe, SignPlugin) and _signs_some_pod(probe, found):
        report.merge(assert_signature_covers_reads(spec, args, found))
    if isinstance(probe, (PlacementGeneratePlugin, PlacementScorePlugin)):
        report.merge(assert_placement_contract(spec, args, found))
    return report


def _signs_some_pod(plugin: SignPlugin, clusters: Sequence[RandomCluster]) -> bool:
    """Whether the plugin signs any pod at all (PodTopologySpread with default constraints signs none)."""
    for cluster in clusters:
        for pod in cluster.pods:
            _, status = plugin.sign_pod(pod)
            if status is None or status.is_success():
                return True
    return False
