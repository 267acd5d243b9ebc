"""A grid written down: a small YAML file (``kubesched sweep --grid FILE``).

The keys are the command's flags, in the plural where they take lists::

    kind: replay                  # or compare
    nodes: openb_node_list_gpu_node.csv
    variants: [openb_pod_list_default.csv, "openb_pod_list_gpushare*.csv"]
    policies: [FGD, BestFit]      # default: the paper's six
    seeds: 10                     # ten seeds from first_seed (default 42), or a list: [42, 47]
    arrivals: [1.0, 1.3]          # default 1.3
    mode: fgd                     # or timeline
    tie_break: name               # or random

    kind: compare
    snapshots: [cluster.json, "dumps/*.json"]
    configs: [default, packing.yaml]   # two or more; the first is the baseline
    seeds: 3
    tie_break: random             # or name
    plugins: [my_plugins:SPECS]   # out-of-tree plugins, module:attribute

A list key also takes a single value. Relative paths are relative to the grid file's
directory; globs are expanded when the file is read. Every problem is a ``GridError``
naming the file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Literal, TypeVar, cast

from kubesched.cluster.yaml_documents import YAMLError, yaml_documents
from kubesched.plugins.gpushare import POLICIES
from kubesched.replay import DEFAULT_ARRIVAL, DEFAULT_SEED

from .grid import CompareGrid, Grid, GridError, ReplayGrid, expand_paths, seed_range

__all__ = ["COMPARE_KEYS", "REPLAY_KEYS", "load_grid"]

REPLAY_KEYS = ("kind", "nodes", "variants", "policies", "seeds", "first_seed", "arrivals", "mode", "tie_break")
COMPARE_KEYS = ("kind", "snapshots", "configs", "seeds", "first_seed", "tie_break", "plugins")
T = TypeVar("T")


def load_grid(path: str) -> Grid:
    """The grid in the YAML file at ``path``; raises ``GridError`` (one line)."""
    document = _read(path)
    kind = document.get("kind")
    if kind not in ("replay", "compare"):
        raise GridError(f"{path}: kind: want replay or compare, got {kind!r}")
    allowed = REPLAY_KEYS if kind == "replay" else COMPARE_KEYS
    unknown = [str(k) for k in document if k not in allowed]
    if unknown:
        raise GridError(f"{path}: unknown key {unknown[0]!r}; a {kind} grid takes {', '.join(allowed)}")
    fields = _Fields(path, document)
    base = Path(path).parent
    try:
        seeds = fields.seeds()
        if kind == "replay":
            return ReplayGrid(
                nodes=expand_paths([fields.need("nodes", _text)], "nodes", base)[0],
                variants=expand_paths(fields.many("variants", _text, required=True), "variants", base),
                policies=fields.many("policies", _text) or tuple(POLICIES),
                seeds=seeds,
                arrivals=fields.many("arrivals", _number) or (DEFAULT_ARRIVAL,),
                mode=cast(Literal["fgd", "timeline"], fields.one("mode", _text) or "fgd"),
                tie_break=cast(Literal["name", "random"], fields.one("tie_break", _text) or "name"),
            )
        configs = fields.many("configs", _text, required=True)
        return CompareGrid(
            snapshots=expand_paths(fields.many("snapshots", _text, required=True), "snapshots", base),
            configs=tuple(c if c == "default" else expand_paths([c], "configs", base)[0] for c in configs),
            seeds=seeds,
            tie_break=cast(Literal["name", "random"], fields.one("tie_break", _text) or "random"),
            plugins=fields.many("plugins", _text),
        )
    except GridError as err:
        message = str(err)
        raise GridError(message if message.startswith(f"{path}:") else f"{path}: {message}") from None


def _read(path: str) -> dict[str, object]:
    try:
        text = Path(path).read_bytes()
    except OSError as err:
        raise GridError(f"{path}: {err.strerror or err}") from None
    try:
        documents = [d for d in yaml_documents(text) if d is not None]
    except YAMLError as err:
        raise GridError(f"{path}: {err}") from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        found = f"{len(documents)} documents" if len(documents) != 1 else type(documents[0]).__name__
        raise GridError(f"{path}: want one mapping of grid keys (kind: replay or compare, ...), got {found}")
    return {str(k): v for k, v in documents[0].items()}


class _Fields:
    """Typed reads of the document's keys, each failing with the key's name."""

    def __init__(self, path: str, document: dict[str, object]) -> None:
        self.path, self.document = path, document

    def one(self, key: str, kind: Callable[[object], T]) -> T | None:
        value = self.document.get(key)
        return None if value is None else self._convert(key, value, kind)

    def need(self, key: str, kind: Callable[[object], T]) -> T:
        value = self.one(key, kind)
        if value is None:
            raise GridError(f"{self.path}: {key}: missing")
        return value

    def many(self, key: str, kind: Callable[[object], T], required: bool = False) -> tuple[T, ...]:
        value = self.document.get(key)
        if value is None or value == []:
            if required:
                raise GridError(f"{self.path}: {key}: missing")
            return ()
        items = value if isinstance(value, list) else [value]
        return tuple(self._convert(key, item, kind) for item in items)

    def seeds(self) -> tuple[int, ...]:
        first = self.one("first_seed", _integer)
        value = self.document.get("seeds")
        if isinstance(value, list):
            if first is not None:
                raise GridError(f"{self.path}: first_seed: give it with a number of seeds, not with a list")
            return self.many("seeds", _integer)
        count = self.one("seeds", _integer)
        return seed_range(1 if count is None else count, DEFAULT_SEED if first is None else first)

    def _convert(self, key: str, value: object, kind: Callable[[object], T]) -> T:
        try:
            return kind(value)
        except ValueError as err:
            raise GridError(f"{self.path}: {key}: want {err}, got {value!r}") from None


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError("a string")
    return value


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("a number")
    return float(value)


def _integer(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("an integer")
    return value
