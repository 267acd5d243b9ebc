"""Step 6 of docs/plugins.md: a plugin with arguments, read from ``pluginConfig``.

PreferLabel scores nodes whose label ``key`` has one of ``values``; both forms, so the
contract suite can check them against each other.
"""

from dataclasses import dataclass, field

import numpy as np

from kubesched.framework import CycleState, Handle, IntArray, PluginSpec, RowArray, SnapshotView
from kubesched.objects import NodeInfo, PodInfo


@dataclass(frozen=True)
class PreferLabelArgs:
    """``args`` of PreferLabel's ``pluginConfig`` entry: ``{key: tier, values: [fast], score: 100}``."""

    key: str = "tier"
    values: list[str] = field(default_factory=lambda: ["fast"])
    score: int = 100

    def validate(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if not self.key:
            problems.append(("key", "must not be empty"))
        if not 0 <= self.score <= 100:
            problems.append(("score", f"must be between 0 and 100, got {self.score}"))
        return problems


class PreferLabel:
    name = "PreferLabel"

    def __init__(self, args: PreferLabelArgs) -> None:
        self.key = args.key
        self.values = frozenset(args.values)
        self.points = args.score

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return self.points if node.node.labels.get(self.key) in self.values else 0

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        ids, value_ids = snapshot.table.label_column(self.key)  # per row, the id of its value (-1: none)
        wanted = [value_ids[v] for v in self.values if v in value_ids]
        return np.where(np.isin(ids[rows], wanted), self.points, 0).astype(np.int64)


def new(args: PreferLabelArgs, handle: Handle) -> PreferLabel:
    return PreferLabel(args)


spec = PluginSpec("PreferLabel", new, args_type=PreferLabelArgs)
