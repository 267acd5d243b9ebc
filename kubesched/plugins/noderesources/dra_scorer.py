"""Whether NodeResourcesFit and BalancedAllocation score DRA-backed extended resources at all
(``dra_scorer``), and the cycle's DRA data they read (``DraScoring``).

The scoring itself (``dra_totals.py``) reads the DRA manager's records, the allocator's
pool index and CEL: DynamicResources' machinery, which a cluster without DRA objects never
loads. So ``dra_totals`` is loaded by name, by ``dra_scorer``, only for a profile whose
scored resources include one a DeviceClass could back (never for the default cpu and
memory) with DRAExtendedResource on.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...framework import Handle
from ..dynamicresources.extended_index import is_dra_extended_resource

if TYPE_CHECKING:
    from .dra_totals import DraScorer, DraScoreState, DraTotals

__all__ = ["DraScoring", "dra_candidates", "dra_scorer"]

TOTALS_MODULE = f"{__package__}.dra_totals"


@dataclass(slots=True, frozen=True)
class DraScoring:
    """One cycle's DRA data with the plugin's totals cache, as ``allocatable_and_requested`` reads them."""

    state: DraScoreState
    totals: DraTotals


def dra_candidates(resources: tuple[str, ...]) -> tuple[str, ...]:
    """The scored resources a DeviceClass could back (``IsDRAExtendedResourceName``); empty
    for cpu and memory, so such profiles never look at DRA."""
    return tuple(name for name in resources if is_dra_extended_resource(name))


def dra_scorer(handle: Handle | None, resources: tuple[str, ...]) -> DraScorer | None:
    """The plugin's DRA access with DRAExtendedResource on and some scored resource a class could
    back; None otherwise (cpu and memory: scoring never looks at DRA)."""
    if handle is None or not handle.features.enable_dra_extended_resource:
        return None
    candidates = dra_candidates(resources)
    if not candidates:
        return None
    scorer: DraScorer = getattr(importlib.import_module(TOTALS_MODULE), "DraScorer")(handle, candidates)
    return scorer
