"""Per-pool limits and prices for a scale-up: a file (``--pools``) and a price label.

What a snapshot cannot tell and a node group's configuration does: how large a pool may
grow, and what its nodes cost. The file is YAML or JSON, a map from pool name (the pool
label's value) to settings, all optional::

    m5.large:  {maxSize: 40, price: 0.096}     # at most 40 nodes in all; 0.096 per node
    m5.xlarge: {maxNodes: 10, price: 0.192}    # at most 10 new nodes
    "*":       {maxNodes: 100}                 # every pool the file does not name

``maxSize`` is a node group's maximum size, as cluster-autoscaler reads it from the cloud
provider (new nodes at most ``maxSize`` less the pool's nodes in the snapshot);
``maxNodes`` caps the new nodes directly, as ``--max-nodes`` does for every pool (the
lowest cap wins). ``price`` is the price of one node in any unit, for the price expander;
``--price-label`` reads it from a label of each pool's nodes instead (the file wins).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..cluster.yaml_documents import YAMLError
from ..objects.node import Node
from .inputs import parse_documents
from .node_pools import NodePool

__all__ = ["PoolSettings", "SettingsError", "read_pool_settings", "parse_pool_settings", "DEFAULT_MAX_NODES",
           "ANY_POOL", "pool_cap", "pool_price", "check_pools_named"]

# cluster-autoscaler's --max-nodes-per-scaleup default: the most nodes one estimate adds.
DEFAULT_MAX_NODES = 1000
ANY_POOL = "*"
_FIELDS = ("maxSize", "maxNodes", "price")


class SettingsError(ValueError):
    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True, slots=True)
class PoolSettings:
    max_size: int | None = None
    max_nodes: int | None = None
    price: float | None = None


def read_pool_settings(path: str) -> dict[str, PoolSettings]:
    try:
        text = Path(path).read_bytes()
    except OSError as err:
        raise SettingsError([f"{path}: {err.strerror or err}"]) from None
    try:
        docs = [d for d in parse_documents(text) if d is not None]
    except YAMLError as err:
        raise SettingsError([f"{path}: {err}"]) from None
    if len(docs) != 1:
        raise SettingsError([f"{path}: want one document, a map from pool name to settings; found {len(docs)}"])
    return parse_pool_settings(docs[0], path)


def parse_pool_settings(doc: object, source: str) -> dict[str, PoolSettings]:
    if not isinstance(doc, Mapping):
        raise SettingsError([f"{source}: want a map from pool name to settings ({', '.join(_FIELDS)})"])
    out: dict[str, PoolSettings] = {}
    for pool, fields in doc.items():
        where = f"{source}: pool {pool}"
        if not isinstance(fields, Mapping):
            raise SettingsError([f"{where}: want a map of {', '.join(_FIELDS)}"])
        unknown = sorted(str(k) for k in fields if k not in _FIELDS)
        if unknown:
            raise SettingsError([f"{where}: unknown field {unknown[0]} (known: {', '.join(_FIELDS)})"])
        max_size = _count(fields.get("maxSize"), f"{where}: maxSize")
        max_nodes = _count(fields.get("maxNodes"), f"{where}: maxNodes")
        price = fields.get("price")
        if price is not None and (isinstance(price, bool) or not isinstance(price, (int, float))
                                  or not math.isfinite(price) or price < 0):
            raise SettingsError([f"{where}: price must be a number, 0 or more"])
        out[str(pool)] = PoolSettings(max_size, max_nodes, float(price) if price is not None else None)
    return out


def _count(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SettingsError([f"{where} must be an integer, 0 or more"])
    return value


def check_pools_named(settings: Mapping[str, PoolSettings], pools: Sequence[NodePool], source: str) -> None:
    """Every pool the file names exists (a misspelt pool would silently get no limit)."""
    names = {p.name for p in pools}
    unknown = sorted(name for name in settings if name != ANY_POOL and name not in names)
    if unknown:
        label = pools[0].label if pools else "the pool label"
        raise SettingsError([f"{source}: pool {unknown[0]}: no node has {label}={unknown[0]}"])


def _settings(settings: Mapping[str, PoolSettings], pool: str) -> PoolSettings:
    return settings.get(pool) or settings.get(ANY_POOL) or PoolSettings()


def pool_cap(pool: NodePool, settings: Mapping[str, PoolSettings], max_nodes: int) -> int:
    """The most new nodes ``pool`` may get (0: it is at its maximum size)."""
    own = _settings(settings, pool.name)
    caps = [max_nodes]
    if own.max_nodes is not None:
        caps.append(own.max_nodes)
    if own.max_size is not None:
        caps.append(max(0, own.max_size - pool.size))
    return min(caps)


def pool_price(pool: NodePool, node: Node, settings: Mapping[str, PoolSettings], price_label: str | None) -> float | None:
    """The price of one node of ``pool``: from the file, else from ``price_label`` on its
    template node; ``SettingsError`` when that label holds something other than a number."""
    own = _settings(settings, pool.name)
    if own.price is not None:
        return own.price
    if price_label is None:
        return None
    value = node.labels.get(price_label)
    if value is None:
        return None
    try:
        price = float(value)
    except ValueError:
        price = math.nan
    if not math.isfinite(price) or price < 0:
        raise SettingsError([f"--price-label {price_label}: node {pool.example} has {price_label}={value}, "
                             "not a price (a number, 0 or more)"])
    return price
