"""What a sweep runs: a grid of replays or of comparisons, expanded to picklable specs.

A grid is the cross product of a few short lists. A replay grid is pod-list variants x
arrival levels x policies x seeds over one node list, one ``ReplaySpec`` per cell; a
comparison grid is snapshots x seeds, each cell a ``CompareSpec`` holding every
configuration (the first is the baseline, as ``kubesched compare`` has it). Specs hold
paths, not data: a worker reads the files itself, so the paths must exist where the
workers run.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

from kubesched.planning import DEFAULT_CONFIG, CompareSpec
from kubesched.plugins.gpushare import POLICIES
from kubesched.replay import DEFAULT_ARRIVAL, DEFAULT_SEED, Mode, ReplayError, ReplaySpec, policy_name

__all__ = ["CompareGrid", "Grid", "GridError", "Kind", "ReplayGrid", "expand_paths", "missing_files", "seed_range"]

Kind = Literal["replay", "compare"]
_GLOB_MAGIC = frozenset("*?[")


class GridError(ValueError):
    """A grid that cannot run; the message is one line, printed before exiting 2."""


@dataclass(frozen=True, slots=True)
class ReplayGrid:
    """Replays of ``variants`` (pod lists) on ``nodes``, per arrival level, policy and seed."""

    nodes: str
    variants: tuple[str, ...]
    policies: tuple[str, ...] = tuple(POLICIES)
    seeds: tuple[int, ...] = (DEFAULT_SEED,)
    arrivals: tuple[float, ...] = (DEFAULT_ARRIVAL,)
    mode: Mode = "fgd"
    tie_break: Literal["name", "random"] = "name"
    kind: Literal["replay"] = field(default="replay", init=False)

    def __post_init__(self) -> None:
        if not self.variants:
            raise GridError("a replay grid needs at least one pod list (--variant)")
        if not self.policies:
            raise GridError("a replay grid needs at least one policy")
        try:
            names = tuple(dict.fromkeys(policy_name(p) for p in self.policies))
        except ReplayError as err:
            raise GridError(str(err)) from None
        object.__setattr__(self, "policies", names)
        _check_seeds(self.seeds)
        if not self.arrivals or any(not a > 0 for a in self.arrivals):
            raise GridError(f"arrival levels must be above 0, got {list(self.arrivals)}")
        if self.mode not in ("fgd", "timeline"):
            raise GridError(f"mode must be fgd or timeline, got {self.mode!r}")
        if self.mode == "timeline" and len(self.arrivals) > 1:
            raise GridError("the timeline mode replays the trace's own times: give no arrival levels")
        if self.tie_break not in ("name", "random"):
            raise GridError(f"tie break must be name or random, got {self.tie_break!r}")

    @property
    def size(self) -> int:
        return len(self.variants) * len(self.arrivals) * len(self.policies) * len(self.seeds)

    def specs(self) -> list[ReplaySpec]:
        """One replay per cell: variant, then arrival, then policy (the paper's order as
        given), then seed."""
        return [ReplaySpec(self.nodes, pods, policy, seed, self.mode, arrival, (), self.tie_break)
                for pods in self.variants for arrival in sorted(set(self.arrivals))
                for policy in self.policies for seed in self.seeds]

    def files(self) -> list[str]:
        return [self.nodes, *self.variants]


@dataclass(frozen=True, slots=True)
class CompareGrid:
    """``kubesched compare`` of ``configs`` on each snapshot, per seed."""

    snapshots: tuple[str, ...]
    configs: tuple[str, ...]
    seeds: tuple[int, ...] = (DEFAULT_SEED,)
    tie_break: Literal["name", "random"] = "random"
    plugins: tuple[str, ...] = ()
    kind: Literal["compare"] = field(default="compare", init=False)

    def __post_init__(self) -> None:
        if not self.snapshots:
            raise GridError("a comparison grid needs at least one snapshot (--snapshot)")
        if len(self.configs) < 2:
            raise GridError(f"a comparison grid needs two or more configurations (--config), got {len(self.configs)}")
        _check_seeds(self.seeds)
        if self.tie_break not in ("name", "random"):
            raise GridError(f"tie break must be name or random, got {self.tie_break!r}")

    @property
    def size(self) -> int:
        return len(self.snapshots) * len(self.seeds)

    def specs(self) -> list[CompareSpec]:
        """One comparison per snapshot and seed, every configuration in each."""
        return [CompareSpec(snapshot, self.configs, seed, self.tie_break, self.plugins)
                for snapshot in self.snapshots for seed in self.seeds]

    def files(self) -> list[str]:
        return [*self.snapshots, *(c for c in self.configs if c != DEFAULT_CONFIG)]


Grid = ReplayGrid | CompareGrid


def _check_seeds(seeds: tuple[int, ...]) -> None:
    if not seeds:
        raise GridError("a grid needs at least one seed")
    if len(set(seeds)) != len(seeds):
        raise GridError(f"seeds repeat: {list(seeds)}")


def seed_range(count: int, first: int = DEFAULT_SEED) -> tuple[int, ...]:
    """``count`` seeds from ``first`` on: the paper's ten runs are 42..51."""
    if count < 1:
        raise GridError(f"seeds must be at least 1, got {count}")
    return tuple(range(first, first + count))


def expand_paths(patterns: Sequence[str], what: str, base: Path | None = None) -> tuple[str, ...]:
    """Paths as given, glob patterns expanded (sorted; a pattern that matches nothing is an
    error); relative ones resolved against ``base`` when given. Globs are expanded here,
    on the machine that submits the sweep."""
    out: list[str] = []
    for pattern in patterns:
        path = pattern if base is None or Path(pattern).is_absolute() else str(base / pattern)
        if _GLOB_MAGIC.intersection(pattern):
            matches = sorted(glob.glob(path))
            if not matches:
                raise GridError(f"{what} {pattern!r}: no file matches")
            out.extend(matches)
        else:
            out.append(path)
    return tuple(dict.fromkeys(out))


def missing_files(grid: Grid) -> list[str]:
    """The grid's files that cannot be read here, one line each: checked before a local
    sweep starts (on a remote cluster the workers read the files, which need not exist on
    this machine)."""
    problems = []
    for name in dict.fromkeys(grid.files()):
        path = Path(name)
        if not path.exists():
            problems.append(f"{name}: No such file or directory")
        elif not (path.is_file() or (grid.kind == "compare" and path.is_dir())):
            problems.append(f"{name}: not a file")
        elif not os.access(path, os.R_OK):
            problems.append(f"{name}: Permission denied")
    return problems
