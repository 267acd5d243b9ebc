"""The records of the pools a node sees: one pool (``Pool``, upstream's ``Pool`` with the slices
that target the node) and all of them with what the allocator keys its memo and verdicts by
(``NodePools``). ``pools`` gathers them; ``pool_versions``, ``counters`` and the search read
them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubesched.objects.dra import CounterSet, ResourceSlice

__all__ = ["NodePools", "Pool"]


@dataclass(slots=True, eq=False)
class Pool:
    driver: str
    pool: str
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    slices_targeting_node: tuple[ResourceSlice, ...] = ()
    slices_not_targeting_node: tuple[ResourceSlice, ...] = ()
    counter_sets: Mapping[str, CounterSet] = field(default_factory=dict)
    key: tuple[str, str] = ("", "")  # (driver, pool), as AllocatedState versions it

    def __post_init__(self) -> None:
        self.key = (self.driver, self.pool)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


@dataclass(slots=True, frozen=True, eq=False)
class NodePools:
    """The pools one node sees, with what the allocator keys its memo and verdicts by."""

    pools: list[Pool]
    # The pools' identity (plus the node's name and labels when a pool selects devices per
    # node), interned: nodes that see the same pools share it.
    key: int
    # Each pool's (driver, pool), as ``AllocatedState`` versions it.
    pool_keys: tuple[tuple[str, str], ...]
    # Position of each (driver, pool) in ``pools``.
    positions: dict[tuple[str, str], int]
    # Per pool: no pool of another driver in the whole index has its name (upstream keys the
    # counters left in a pool by pool name only; see ``exhausted.pool_exhausted``).
    name_unique: tuple[bool, ...]
