"""DynamicResources' statuses shared by its PreFilter, Filter and batch Filter (one object per
fixed reason: the batch Filter's verdicts refer to them by position)."""

from __future__ import annotations

from ...framework import Code, Status
from ...objects.selectors import NodeSelector
from .names import ERR_CANNOT_ALLOCATE, ERR_NOT_AVAILABLE

__all__ = ["SKIP", "NOWHERE", "CANNOT_ALLOCATE", "NOT_AVAILABLE", "timed_out", "unresolvable"]

SKIP = Status(Code.SKIP)
NOWHERE = NodeSelector(())  # matches no node: a claim whose binding failed is available nowhere
CANNOT_ALLOCATE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_CANNOT_ALLOCATE)
NOT_AVAILABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NOT_AVAILABLE)


def timed_out(node: str) -> Status:
    """A node's allocation past the filter timeout: an error (retried with backoff), as upstream's."""
    return Status(Code.ERROR, f"node {node}: timed out trying to allocate devices")


def unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)
