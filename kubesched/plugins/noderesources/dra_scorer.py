"""Whether NodeResourcesFit and BalancedAllocation score DRA-backed extended resources at all
(``dra_scorer``), and what they see of the scoring: the scorer (``DraScorer``), the cycle's
DRA data (``DraScoring``: the state listed at PreScore and the totals that patch the node
table's columns with it).

The scoring itself (``dra_totals.py``) reads the DRA manager's records, the allocator's
pool index and CEL: DynamicResources' machinery, which a cluster without DRA objects never
loads. So ``dra_totals`` is loaded by name, by ``dra_scorer``, only for a profile whose
scored resources include one a DeviceClass could back (never for the default cpu and
memory) with DRAExtendedResource on; what the plugins call of it is declared here as
protocols, so that it imports this module and nothing here imports it back.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...framework import CycleState, Handle, IntArray, NodeTableView, RowArray
from ..dynamicresources.extended_index import is_dra_extended_resource

if TYPE_CHECKING:  # annotations only: loaded with dra_totals
    from ...structured import AllocatedState, SliceIndex
    from ..dynamicresources.manager import DraManager

__all__ = ["DeviceTotals", "DraScoreState", "DraScorer", "DraScoring", "dra_candidates", "dra_scorer"]

TOTALS_MODULE = f"{__package__}.dra_totals"


@dataclass(slots=True, frozen=True)
class DraScoreState:
    """upstream's ``draPreScoreState``: the devices in use and the slices, listed at PreScore."""

    manager: DraManager
    allocated: AllocatedState
    slices: SliceIndex


class DeviceTotals(Protocol):
    """What scoring asks of the per-class device totals (``dra_totals.DraTotals``)."""

    def patch(self, state: DraScoreState, table: NodeTableView, rows: RowArray, name: str,
              alloc: IntArray, requested: IntArray) -> tuple[IntArray, IntArray]: ...


@dataclass(slots=True, frozen=True)
class DraScoring:
    """One cycle's DRA data with the plugin's totals cache, as ``allocatable_and_requested`` reads them."""

    state: DraScoreState
    totals: DeviceTotals


class DraScorer(Protocol):
    """A scoring plugin's way to DRA (``dra_totals.ManagerDraScorer``)."""

    def gather(self, cycle: CycleState, names: tuple[str, ...], pod_requests: list[int]) -> DraScoring | None: ...


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
    scorer: DraScorer = getattr(importlib.import_module(TOTALS_MODULE), "ManagerDraScorer")(handle, candidates)
    return scorer
