"""Label selectors as kubectl's ``-l`` takes them (``app=web,tier!=db,env in (a,b),!legacy``).

Only what the explain filter needs: parse the text once, then match label maps. The
grammar and meaning are apimachinery's ``labels.Parse``: ``=``/``==`` and ``!=``, ``in``
and ``notin`` with a parenthesised set, a bare key (exists) and ``!key`` (does not
exist); requirements are ANDed. ``!=`` and ``notin`` match a pod without the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LabelQuery", "LabelQueryError", "parse_label_query"]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[A-Za-z0-9]?(?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(([^()]*)\)\s*$")
_EQUAL = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


class LabelQueryError(ValueError):
    """Text that is not a label selector."""


@dataclass(slots=True, frozen=True)
class _Requirement:
    key: str
    operator: str  # "in", "notin", "exists", "!"
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "exists":
            return self.key in labels
        if self.operator == "!":
            return self.key not in labels
        if self.operator == "in":
            return labels.get(self.key) in self.values
        return labels.get(self.key) not in self.values


@dataclass(slots=True, frozen=True)
class LabelQuery:
    requirements: tuple[_Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)


def _split(text: str) -> list[str]:
    """Split on the commas that are not inside a ``( ... )`` set."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_label_query(text: str) -> LabelQuery:
    """Parse a selector; an empty text selects everything."""
    requirements: list[_Requirement] = []
    if not text.strip():
        return LabelQuery(())
    for part in _split(text):
        if match := _SET.match(part):
            values = frozenset(v.strip() for v in match[3].split(",") if v.strip())
            requirements.append(_Requirement(match[1], match[2], values))
        elif match := _EQUAL.match(part):
            requirements.append(_Requirement(match[1], "notin" if match[2] == "!=" else "in", frozenset({match[3]})))
        elif match := _EXISTS.match(part):
            requirements.append(_Requirement(match[2], "!" if match[1] else "exists", frozenset()))
        else:
            raise LabelQueryError(f"invalid label selector {text!r}: cannot parse {part.strip()!r}")
    return LabelQuery(tuple(requirements))
