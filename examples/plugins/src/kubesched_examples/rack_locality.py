"""RackLocality: a placement policy for pod groups, in both placement extension points.

Upstream's TopologyPlacementGenerator honours a PodGroup's *required* topology constraint:
a group constrained to racks lands in one rack or not at all. Many training jobs want
something softer: one rack when it fits (the fastest interconnect), else as few racks as
possible, but never left pending because no single rack has room. RackLocality is that
policy, for every pod group (the v1.36 API has no soft constraint to ask for it):

* **PlacementGenerate** (``generate_placements``): one placement per value of the rack
  label (``topologyKey``, ``example.com/rack`` by default) among the parent's nodes, named
  after it, plus the parent itself (named ``*``) as the spill-over. A group that already
  has members running keeps to their racks' nodes plus the spill-over. A group with a
  required topology constraint gets exactly what TopologyPlacementGenerator gives it: one
  placement per value of the constraint's key, only the scheduled members' domain if any.
* **PlacementScore** (``score_placement``): the number of distinct racks the placement's
  proposed pods use, with the group's running members; ``normalize_placement_score``
  turns it into ``100 * fewest // racks`` (the most compact placement scores 100, one
  spanning twice as many racks 50). A placement whose proposals use no rack scores 0.

The scheduler tries every placement, scores those where enough of the group fits (with
PodGroupPodsCount and NodeResourcesFit beside this plugin) and binds the best, so a group
that fits in one rack goes to one rack, and one that does not still binds across racks.

A profile has at most one PlacementGenerate plugin: disable TopologyPlacementGenerator
where this one is enabled (``examples/plugins/README.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.framework import (
    MAX_SCORE,
    MIN_SCORE,
    Code,
    GeneratePlacementsResult,
    Handle,
    Placement,
    PlacementScore,
    PluginSpec,
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    Status,
)
from kubesched.objects import NodeInfo, PodInfo

__all__ = ["NAME", "RACK_LABEL", "SPILL_OVER", "RackLocality", "RackLocalityArgs", "new", "spec"]

NAME = "RackLocality"
RACK_LABEL = "example.com/rack"
SPILL_OVER = "*"
"""The name of the placement that is the whole parent."""


@dataclass(frozen=True, slots=True)
class RackLocalityArgs:
    topology_key: str = RACK_LABEL
    """The node label whose values are racks."""


class RackLocality:
    name = NAME

    def __init__(self, args: RackLocalityArgs, handle: Handle) -> None:
        if not args.topology_key:
            raise ValueError("topologyKey: Required value")
        self.key = args.topology_key
        self.handle = handle

    # -- PlacementGenerate ----------------------------------------------------------------
    def generate_placements(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, parent: Placement
    ) -> tuple[GeneratePlacementsResult | None, Status | None]:
        manager = self.handle.pod_group_manager
        group = manager.pod_group(pod_group.namespace, pod_group.name)
        if group is None:
            return None, Status(Code.ERROR, f"pod group {pod_group.key} not found")
        running = self._running(pod_group)
        if group.topology_keys:  # a required constraint: one domain, as upstream's generator
            key = group.topology_keys[0]
            domains = {self._label(pod, key) for pod in running}
            if len(domains) > 1 or None in domains:
                return None, Status(Code.ERROR, f"the scheduled members of {pod_group.key} are not in one {key}")
            only = next(iter(domains)) if domains else None
            by_value = self._by_value(parent.nodes, key)
            return GeneratePlacementsResult([Placement(value, tuple(nodes)) for value, nodes in sorted(by_value.items())
                                             if only is None or value == only]), None
        by_rack = self._by_value(parent.nodes, self.key)
        racks = {self._label(pod, self.key) for pod in running} - {None}
        placements = [Placement(rack, tuple(nodes)) for rack, nodes in sorted(by_rack.items()) if not racks or rack in racks]
        if len(racks) > 1:  # the members already span racks: only the spill-over can hold them all
            placements = []
        return GeneratePlacementsResult(placements + [Placement(SPILL_OVER, parent.nodes)]), None

    # -- PlacementScore -------------------------------------------------------------------
    def score_placement(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, assignments: PodGroupAssignments
    ) -> tuple[int, Status | None]:
        racks = {self._label(pod, self.key) for pod in self._running(pod_group)}
        snapshot = self.handle.snapshot()
        for proposed in assignments.proposed_assignments:
            info = snapshot.get(proposed.node_name)
            racks.add(info.node.labels.get(self.key) if info is not None else None)
        racks.discard(None)
        return len(racks), None

    def normalize_placement_score(
        self, state: PodGroupCycleState, pod_group: PodGroupInfo, scores: list[PlacementScore]
    ) -> Status | None:
        used = [s.score for s in scores if s.score > 0]
        fewest = min(used, default=0)
        for entry in scores:
            entry.score = MIN_SCORE if entry.score == 0 else MAX_SCORE * fewest // entry.score
        return None

    # -- helpers --------------------------------------------------------------------------
    def _running(self, pod_group: PodGroupInfo) -> list[PodInfo]:
        """The group's members already assumed or bound."""
        found = self.handle.pod_group_manager.pod_group_states().get(pod_group.namespace, pod_group.name)
        return found.scheduled_pods() if found is not None else []

    def _label(self, pod: PodInfo, key: str) -> str | None:
        info = self.handle.snapshot().get(pod.node_name)
        return info.node.labels.get(key) if info is not None else None

    @staticmethod
    def _by_value(nodes: tuple[NodeInfo, ...], key: str) -> dict[str, list[NodeInfo]]:
        out: dict[str, list[NodeInfo]] = {}
        for info in nodes:
            value = info.node.labels.get(key)
            if value is not None:
                out.setdefault(value, []).append(info)
        return out


def new(args: RackLocalityArgs, handle: Handle) -> RackLocality:
    return RackLocality(args, handle)


spec = PluginSpec(NAME, new, args_type=RackLocalityArgs)
