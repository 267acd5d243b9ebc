"""PodTopologySpread: upstream's topology spread constraints, with incrementally maintained counts."""

from .args import PodTopologySpreadArgs, parse_args
from .plugin import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    PodTopologySpread,
    new,
)

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "new",
    "parse_args",
]
