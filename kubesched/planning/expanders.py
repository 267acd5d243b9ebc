"""cluster-autoscaler's expanders: which pool to grow when several would help.

Each expander narrows the options to its best ones (``expander/*/``); ``--expander`` names
one or a chain (``priority,least-waste``), each applied to what the previous kept, stopping
as soon as one option is left, as cluster-autoscaler's ``chainStrategy`` does:

* ``least-waste``: the least unused share of the new nodes' cpu plus the least unused
  share of their memory, ``(N*cpu - requested cpu)/(N*cpu) + (N*mem - requested mem)/(N*mem)``
  over the pods the option helps (cluster-autoscaler reads the node's capacity, a
  snapshot's nodes keep their allocatable: that is read here);
* ``most-pods``: the most pods helped;
* ``least-nodes``: the fewest new nodes;
* ``priority``: the highest priority whose regular expressions match the pool's name,
  from a file in the format of cluster-autoscaler's ``cluster-autoscaler-priority-expander``
  ConfigMap (the ConfigMap itself, or its ``priorities`` value: a map from priority to a
  list of expressions); pools matching no expression are left out unless none matches;
* ``price``: the lowest price per pod helped, ``price of one node * N / pods helped``,
  with each pool's price per node from ``--price-label`` (a node label holding a number,
  read from the pool's template node) or from the pools file. cluster-autoscaler's price
  expander asks the cloud provider for node and pod prices and weighs in how far the
  node's size is from a preferred size; a snapshot has no prices, so this simpler
  formula is the one used. Pools with no price are left out (as cluster-autoscaler leaves
  out a pool whose price it cannot get);
* ``random``: one option at random (seeded, so a run can be repeated).

Where options are still tied after the chain, cluster-autoscaler picks one at random;
here the first by pool name is taken, so the answer is the same from run to run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cluster.yaml_documents import YAMLError
from .inputs import parse_documents

__all__ = ["Option", "ExpanderError", "Priorities", "Choice", "EXPANDERS", "DEFAULT_EXPANDER", "parse_expanders",
           "read_priorities", "parse_priorities", "choose", "waste", "price_per_pod", "describe", "priority_of"]

DEFAULT_EXPANDER = "least-waste"
EXPANDERS = ("least-waste", "most-pods", "least-nodes", "priority", "price", "random")
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"


class ExpanderError(ValueError):
    """A bad ``--expander`` or priority file: one line per problem."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass(frozen=True, slots=True)
class Option:
    """A way to grow one pool: what the expanders weigh."""

    pool: str
    node_count: int
    pod_count: int
    requested_cpu: int  # millicores, summed over the pods helped
    requested_memory: int  # bytes
    node_cpu: int  # millicores of one new node
    node_memory: int  # bytes
    price: float | None = None  # of one new node


@dataclass(frozen=True, slots=True)
class Priorities:
    """The priority expander's configuration: priority -> patterns on pool names."""

    source: str
    by_priority: tuple[tuple[int, tuple[re.Pattern[str], ...]], ...]

    def of(self, pool: str) -> int | None:
        """The highest priority with a pattern found in ``pool`` (Go's ``FindStringIndex``:
        anywhere in the name); None when no pattern matches."""
        found = [prio for prio, patterns in self.by_priority if any(p.search(pool) for p in patterns)]
        return max(found) if found else None


@dataclass(frozen=True, slots=True)
class Choice:
    """The option taken and how: the expander that left it alone, or the name order."""

    option: Option
    decided_by: str  # an expander's name, or "pool name" when the chain left a tie
    kept: tuple[tuple[str, tuple[str, ...]], ...]  # (expander, pools it kept), in chain order


def parse_expanders(text: str) -> tuple[str, ...]:
    """``--expander``: names separated by commas, each at most once, ``random`` last (it always
    leaves one option, so nothing after it would be asked, which cluster-autoscaler refuses)."""
    names = tuple(part.strip() for part in text.split(","))
    problems: list[str] = []
    for i, name in enumerate(names):
        if name not in EXPANDERS:
            problems.append(f"--expander {text}: unknown expander {name!r} (known: {', '.join(EXPANDERS)})")
        elif name in names[:i]:
            problems.append(f"--expander {text}: {name} is given twice; each expander may be given once")
        elif i and names[i - 1] == "random":
            problems.append(f"--expander {text}: {name} comes after random, which always leaves one option")
    if problems:
        raise ExpanderError(problems[:1])
    return names


def read_priorities(path: str) -> Priorities:
    """The priority expander's file: cluster-autoscaler's ConfigMap, or its ``priorities`` value."""
    try:
        text = Path(path).read_bytes()
    except OSError as err:
        raise ExpanderError([f"{path}: {err.strerror or err}"]) from None
    try:
        docs = [d for d in parse_documents(text) if d is not None]
    except YAMLError as err:
        raise ExpanderError([f"{path}: {err}"]) from None
    if len(docs) != 1:
        raise ExpanderError([f"{path}: want one document (a ConfigMap {PRIORITY_CONFIGMAP}, or its priorities), "
                             f"found {len(docs)}"])
    return parse_priorities(docs[0], path)


def parse_priorities(doc: object, source: str) -> Priorities:
    """A ConfigMap (its ``data.priorities`` is YAML text) or the priorities map itself."""
    if isinstance(doc, Mapping) and doc.get("kind") == "ConfigMap":
        data = doc.get("data")
        text = data.get("priorities") if isinstance(data, Mapping) else None
        if not isinstance(text, str):
            raise ExpanderError([f"{source}: ConfigMap has no data.priorities (cluster-autoscaler reads the "
                                 "priorities key)"])
        if not text.strip():
            raise ExpanderError([f"{source}: data.priorities is empty"])
        try:
            inner = parse_documents(text.encode())
        except YAMLError as err:
            raise ExpanderError([f"{source}: data.priorities: {err}"]) from None
        doc = inner[0] if len(inner) == 1 else None
        source = f"{source}: data.priorities"
    if not isinstance(doc, Mapping) or not doc:
        raise ExpanderError([f"{source}: want a map from priority (an integer) to a list of regular expressions"])
    by_priority: list[tuple[int, tuple[re.Pattern[str], ...]]] = []
    for key, patterns in doc.items():
        prio = _int_key(key)
        if prio is None:
            raise ExpanderError([f"{source}: priority {key!r} is not an integer"])
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ExpanderError([f"{source}: priority {prio}: want a list of regular expressions"])
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(re.compile(pattern))
            except re.error as err:
                raise ExpanderError([f"{source}: priority {prio}: regular expression {pattern!r}: {err}"]) from None
        by_priority.append((prio, tuple(compiled)))
    return Priorities(source, tuple(by_priority))


def _int_key(key: object) -> int | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key
    if isinstance(key, str):
        try:
            return int(key.strip())
        except ValueError:
            return None
    return None


def waste(option: Option) -> float:
    """least-waste's score: unused cpu share plus unused memory share of the new nodes."""
    total = 0.0
    cpu = option.node_cpu * option.node_count
    memory = option.node_memory * option.node_count
    if cpu > 0:
        total += (cpu - option.requested_cpu) / cpu
    if memory > 0:
        total += (memory - option.requested_memory) / memory
    return total


def price_per_pod(option: Option) -> float | None:
    if option.price is None or option.pod_count == 0:
        return None
    return option.price * option.node_count / option.pod_count


def _least(options: Sequence[Option], score: Callable[[Option], float | None]) -> list[Option]:
    scored = [(s, o) for o in options if (s := score(o)) is not None]
    if not scored:
        return []
    best = min(s for s, _ in scored)
    return [o for s, o in scored if s == best]


def _filter(name: str, options: Sequence[Option], priorities: Priorities | None, rng: random.Random) -> list[Option]:
    if name == "least-waste":
        return _least(options, waste)
    if name == "most-pods":
        return _least(options, lambda o: -o.pod_count)
    if name == "least-nodes":
        return _least([o for o in options if o.node_count > 0], lambda o: o.node_count)
    if name == "price":
        return _least(options, price_per_pod)
    if name == "priority":
        if priorities is None:
            return list(options)
        ranked = [(p, o) for o in options if (p := priorities.of(o.pool)) is not None]
        if not ranked:
            return list(options)  # no pool matches: cluster-autoscaler keeps them all
        top = max(p for p, _ in ranked)
        return [o for p, o in ranked if p == top]
    if name == "random":
        return [rng.choice(list(options))] if options else []
    raise ExpanderError([f"unknown expander {name!r}"])


def choose(options: Sequence[Option], expanders: Sequence[str], priorities: Priorities | None = None,
           seed: int = 0) -> Choice | None:
    """The option the chain of ``expanders`` leaves; None when none is left (no option, or
    the price expander knows no price)."""
    rng = random.Random(seed)
    kept: list[tuple[str, tuple[str, ...]]] = []
    left = sorted(options, key=lambda o: o.pool)
    for name in expanders:
        left = sorted(_filter(name, left, priorities, rng), key=lambda o: o.pool)
        kept.append((name, tuple(o.pool for o in left)))
        if len(left) == 1:
            return Choice(left[0], name, tuple(kept))
        if not left:
            return None
    if not left:
        return None
    return Choice(left[0], "pool name" if len(left) > 1 else expanders[-1], tuple(kept))


def priority_of(priorities: Priorities | None, pool: str) -> int | None:
    return priorities.of(pool) if priorities is not None else None


def describe(option: Option, expanders: Sequence[str], priorities: Priorities | None) -> dict[str, Any]:
    """What each expander of the chain sees of ``option`` (for the report)."""
    out: dict[str, Any] = {}
    for name in expanders:
        if name == "least-waste":
            out["waste"] = round(waste(option), 4)
        elif name == "price":
            per_pod = price_per_pod(option)
            out["pricePerPod"] = round(per_pod, 6) if per_pod is not None else None
        elif name == "priority":
            out["priority"] = priority_of(priorities, option.pool)
    return out
