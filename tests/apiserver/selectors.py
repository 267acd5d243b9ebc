"""Label and field selectors for list and watch, as kube-apiserver applies them.

Labels support equality and set-based requirements (k8s.io/apimachinery/pkg/labels);
fields support ``=``, ``==`` and ``!=`` on the field labels each resource's
conversion accepts; an unknown field label is a 400 worded as upstream words it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tests.apiserver.errors import StatusError, bad_request
from tests.apiserver.resources import Resource

JSONDict = dict[str, object]


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label requirement: operator is one of =, !=, in, notin, exists, !, gt, lt."""

    key: str
    op: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "=":
            return present and value in self.values
        if self.op == "in":
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("gt", "lt"):
            try:
                have, want = int(str(value)), int(self.values[0])
            except ValueError:
                return False
            return present and (have > want if self.op == "gt" else have < want)
        return False


_SET = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_CMP = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=|>|<)\s*([A-Za-z0-9_.-]*)\s*$")


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses (set values contain commas)."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


@dataclass(frozen=True, slots=True)
class LabelSelector:
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        have = labels or {}
        return all(r.matches(have) for r in self.requirements)

    @staticmethod
    def parse(text: str) -> "LabelSelector":
        reqs: list[Requirement] = []
        for part in _split_top(text):
            cmp_match = _CMP.match(part)
            if cmp_match:
                key, op, value = cmp_match.groups()
                mapped = {"==": "=", "=": "=", "!=": "!=", ">": "gt", "<": "lt"}[op]
                reqs.append(Requirement(key, mapped, (value,)))
                continue
            set_match = _SET.match(part)
            if not set_match:
                raise bad_request(f"unable to parse requirement: found '{part.strip()}', expected: "
                                  f"'=', '!=', '==', 'in', notin'")
            bang, key, op, values = set_match.groups()
            if op:
                reqs.append(Requirement(key, op, tuple(v.strip() for v in values.split(",") if v.strip())))
            else:
                reqs.append(Requirement(key, "!" if bang else "exists", ()))
        return LabelSelector(tuple(reqs))


def _dig(obj: Mapping[str, object], *path: str) -> object:
    cur: object = obj
    for step in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(step)
    return cur


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def field_value(obj: Mapping[str, object], label: str) -> str:
    """The string a field label selects on, as the registry's GetAttrs computes it."""
    if label == "metadata.name":
        return _text(_dig(obj, "metadata", "name"))
    if label == "metadata.namespace":
        return _text(_dig(obj, "metadata", "namespace"))
    if label.startswith("involvedObject."):
        sub = label.split(".", 1)[1]
        ref = obj.get("involvedObject") if "involvedObject" in obj else obj.get("regarding")
        return _text(ref.get(sub) if isinstance(ref, Mapping) else None)
    if label == "source":
        source = _dig(obj, "source", "component")
        return _text(source if source is not None else obj.get("reportingController"))
    if label == "spec.unschedulable" or label == "spec.hostNetwork":
        return "true" if _dig(obj, *label.split(".")) else "false"
    return _text(_dig(obj, *label.split(".")))


@dataclass(frozen=True, slots=True)
class FieldTerm:
    label: str
    negated: bool
    value: str


@dataclass(frozen=True, slots=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...]

    def matches(self, obj: Mapping[str, object]) -> bool:
        return all((field_value(obj, t.label) == t.value) != t.negated for t in self.terms)

    @staticmethod
    def parse(text: str, resource: Resource) -> "FieldSelector":
        terms: list[FieldTerm] = []
        for part in text.split(","):
            if not part:
                continue
            for op in ("!=", "==", "="):
                if op in part:
                    label, value = part.split(op, 1)
                    break
            else:
                raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
            label = label.strip()
            if label not in resource.field_labels:
                if resource.extra_fields:
                    raise bad_request(f"field label not supported: {label}")
                raise bad_request(f'"{label}" is not a known field selector: only "metadata.name", '
                                  f'"metadata.namespace"')
            terms.append(FieldTerm(label, op == "!=", value))
        return FieldSelector(tuple(terms))


@dataclass(frozen=True, slots=True)
class Predicate:
    """Namespace plus label and field selectors: what a list or watch keeps."""

    namespace: str | None
    labels: LabelSelector | None
    fields: FieldSelector | None

    @property
    def has_selectors(self) -> bool:
        return bool(self.labels and self.labels.requirements) or bool(self.fields and self.fields.terms)

    def matches(self, obj: Mapping[str, object]) -> bool:
        if self.labels is not None:
            meta = obj.get("metadata")
            labels = meta.get("labels") if isinstance(meta, Mapping) else None
            if not self.labels.matches(labels if isinstance(labels, Mapping) else None):
                return False
        return self.fields is None or self.fields.matches(obj)


def predicate_from_query(query: Mapping[str, str], resource: Resource, namespace: str | None) -> Predicate:
    """Parse ``labelSelector`` and ``fieldSelector`` query parameters (400 when malformed)."""
    label_text = query.get("labelSelector", "")
    field_text = query.get("fieldSelector", "")
    try:
        labels = LabelSelector.parse(label_text) if label_text else None
    except StatusError:
        raise
    fields = FieldSelector.parse(field_text, resource) if field_text else None
    return Predicate(namespace, labels, fields)
