"""Label selectors and node selector terms, compiled once into matchers.

``LabelSelector`` follows ``metav1.LabelSelectorAsSelector``; ``NodeSelector`` follows
``component-helpers/scheduling/corev1/nodeaffinity``. Both keep their requirements as
plain tuples so that the node table can evaluate them over all nodes at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from .errors import ObjectError

__all__ = [
    "Requirement",
    "LabelSelector",
    "NodeSelectorTerm",
    "NodeSelector",
    "PreferredSchedulingTerm",
    "parse_label_selector",
    "parse_node_selector",
    "parse_node_selector_term",
    "parse_preferred_terms",
    "EVERYTHING",
    "NOTHING",
]

LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")
NODE_NAME_FIELD = "metadata.name"


_GO_INT = re.compile(r"[+-]?[0-9]+")


def _parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: a sign and digits only (no spaces, no underscores)."""
    if not isinstance(text, str) or _GO_INT.fullmatch(text) is None:
        return None
    number = int(text, 10)
    return number if -(2**63) <= number < 2**63 else None


@dataclass(slots=True, frozen=True)
class Requirement:
    """One ``key op values`` condition on a label (or field) map."""

    key: str
    operator: str
    values: frozenset[str]
    number: int = 0  # the single value of Gt / Lt
    # The values as written, repeats kept: nothing matches on them, but upstream's node
    # affinity signature sorts the list (OpportunisticBatching). Not compared.
    listed: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return labels.get(self.key) in self.values
        if op == "NotIn":
            return labels.get(self.key) not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        found = labels.get(self.key)
        if found is None:
            return False
        parsed = _parse_int(found)
        if parsed is None:
            return False
        return parsed > self.number if op == "Gt" else parsed < self.number


def _requirement(raw: Any, field_path: str, operators: tuple[str, ...], gt_lt: bool) -> Requirement:
    if not isinstance(raw, Mapping):
        raise ObjectError(field_path, "must be an object with key, operator and values")
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise ObjectError(f"{field_path}.key", "must be a non-empty string")
    op = raw.get("operator")
    if op not in operators:
        raise ObjectError(f"{field_path}.operator", f"unsupported operator {op!r}; valid: {', '.join(operators)}")
    values = raw.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ObjectError(f"{field_path}.values", "must be a list of strings")
    if op in ("In", "NotIn") and not values:
        raise ObjectError(f"{field_path}.values", f"must be specified when operator is {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise ObjectError(f"{field_path}.values", f"may not be specified when operator is {op}")
    number = 0
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise ObjectError(f"{field_path}.values", f"must have one element when operator is {op}")
        parsed = _parse_int(values[0])
        if parsed is None:
            raise ObjectError(f"{field_path}.values[0]", f"must be an integer for operator {op}")
        number = parsed
    return Requirement(key, op, frozenset(values), number, tuple(values))


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """A compiled ``metav1.LabelSelector``; ``requirements`` are ANDed.

    ``nothing`` is the selector that matches no object (a nil selector in upstream's
    pod affinity and spreading code); an empty selector matches everything.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for req in self.requirements:
            if not req.matches(labels):
                return False
        return True

    def is_empty(self) -> bool:
        return not self.nothing and not self.requirements


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def parse_label_selector(raw: Any, field_path: str) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: nil matches nothing, ``{}`` everything."""
    if raw is None:
        return NOTHING
    if not isinstance(raw, Mapping):
        raise ObjectError(field_path, "must be a label selector object")
    reqs: list[Requirement] = []
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise ObjectError(f"{field_path}.matchLabels", "must be a map of strings")
    for key, val in match_labels.items():
        if not isinstance(val, str):
            raise ObjectError(f"{field_path}.matchLabels.{key}", "must be a string")
        reqs.append(Requirement(str(key), "In", frozenset((val,))))
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise ObjectError(f"{field_path}.matchExpressions", "must be a list")
    for i, expr in enumerate(expressions):
        reqs.append(_requirement(expr, f"{field_path}.matchExpressions[{i}]", LABEL_OPERATORS, False))
    reqs.sort(key=lambda r: r.key)  # upstream sorts requirements by key
    return LabelSelector(tuple(reqs))


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """``labels.SelectorFromSet``: every pair must be present."""
    return LabelSelector(tuple(sorted((Requirement(k, "In", frozenset((v,))) for k, v in labels.items()), key=lambda r: r.key)))


@dataclass(slots=True, frozen=True)
class NodeSelectorTerm:
    """One term: label expressions and ``metadata.name`` field expressions, ANDed.

    A term with neither matches no node.
    """

    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        if not self.expressions and not self.fields:
            return False
        for req in self.expressions:
            if not req.matches(labels):
                return False
        if self.fields:
            field_map = {NODE_NAME_FIELD: name}
            for req in self.fields:
                if not req.matches(field_map):
                    return False
        return True

    def is_empty(self) -> bool:
        return not self.expressions and not self.fields


@dataclass(slots=True, frozen=True)
class NodeSelector:
    """``v1.NodeSelector``: terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        for term in self.terms:
            if term.matches(labels, name):
                return True
        return False


@dataclass(slots=True, frozen=True)
class PreferredSchedulingTerm:
    weight: int
    term: NodeSelectorTerm


def parse_node_selector_term(raw: Any, field_path: str) -> NodeSelectorTerm:
    if not isinstance(raw, Mapping):
        raise ObjectError(field_path, "must be a node selector term")
    exprs = raw.get("matchExpressions") or []
    fields = raw.get("matchFields") or []
    if not isinstance(exprs, list):
        raise ObjectError(f"{field_path}.matchExpressions", "must be a list")
    if not isinstance(fields, list):
        raise ObjectError(f"{field_path}.matchFields", "must be a list")
    parsed_fields = []
    for i, f in enumerate(fields):
        req = _requirement(f, f"{field_path}.matchFields[{i}]", FIELD_OPERATORS, False)
        if req.key != NODE_NAME_FIELD:
            raise ObjectError(f"{field_path}.matchFields[{i}].key", f"not a supported field selector: {req.key!r}")
        if len(req.values) != 1:
            raise ObjectError(f"{field_path}.matchFields[{i}].values", "must have one element")
        parsed_fields.append(req)
    return NodeSelectorTerm(
        tuple(_requirement(e, f"{field_path}.matchExpressions[{i}]", NODE_OPERATORS, True) for i, e in enumerate(exprs)),
        tuple(parsed_fields),
    )


def parse_node_selector(raw: Any, field_path: str) -> NodeSelector:
    if not isinstance(raw, Mapping):
        raise ObjectError(field_path, "must be a node selector")
    terms = raw.get("nodeSelectorTerms") or []
    if not isinstance(terms, list):
        raise ObjectError(f"{field_path}.nodeSelectorTerms", "must be a list")
    return NodeSelector(tuple(parse_node_selector_term(t, f"{field_path}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)))


def parse_preferred_terms(raw: Any, field_path: str, pod: bool = False) -> tuple[PreferredSchedulingTerm, ...]:
    """Preferred terms. A zero weight or an empty preference never scores, but is kept: upstream
    scores (all zeros) rather than skips a pod that has preferred terms, even such ones.

    A pod's weights (``pod``) are in 0-100 (the API server's range; a zero weight, which it
    refuses, is read and never scores); NodeAffinity's ``addedAffinity`` takes any int32, as
    upstream's ``ValidateNodeAffinityArgs`` checks no range."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(field_path, "must be a list")
    out = []
    for i, item in enumerate(raw):
        path = f"{field_path}[{i}]"
        if not isinstance(item, Mapping):
            raise ObjectError(path, "must be a preferred scheduling term")
        weight = item.get("weight", 0)
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise ObjectError(f"{path}.weight", "must be an integer in the range 1-100" if pod else "must be an integer")
        if pod and not 0 <= weight <= 100:
            raise ObjectError(f"{path}.weight", "must be an integer in the range 1-100")
        if not -(2**31) <= weight < 2**31:
            raise ObjectError(f"{path}.weight", "must be a 32-bit integer")
        term = parse_node_selector_term(item.get("preference") or {}, f"{path}.preference")
        out.append(PreferredSchedulingTerm(weight, term))
    return tuple(out)
