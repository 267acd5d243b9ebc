"""Taints and tolerations (``v1.Taint``, ``v1.Toleration.ToleratesTaint``)."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ObjectError

__all__ = ["Taint", "Toleration", "parse_taints", "parse_tolerations", "find_untolerated_taint"]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


@dataclass(slots=True, frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(slots=True, frozen=True)
class Toleration:
    """A ``v1.Toleration``. ``operator`` is ``Equal`` when the toleration leaves it empty;
    ``operator_omitted`` and ``toleration_seconds`` change no match, but upstream's
    signature (OpportunisticBatching) tells pods apart by them, so they are kept."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None
    operator_omitted: bool = False

    def tolerates(self, taint: Taint) -> bool:
        """``ToleratesTaint``: an empty key with Exists tolerates every taint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def parse_taints(raw: Any, field_path: str) -> tuple[Taint, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(field_path, "must be a list of taints")
    out = []
    for i, item in enumerate(raw):
        path = f"{field_path}[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str) or not item.get("key"):
            raise ObjectError(f"{path}.key", "must be a non-empty string")
        effect = item.get("effect")
        if effect not in TAINT_EFFECTS:
            raise ObjectError(f"{path}.effect", f"unsupported effect {effect!r}; valid: {', '.join(TAINT_EFFECTS)}")
        out.append(Taint(item["key"], str(item.get("value") or ""), effect))
    return tuple(out)


def parse_tolerations(raw: Any, field_path: str) -> tuple[Toleration, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(field_path, "must be a list of tolerations")
    out = []
    for i, item in enumerate(raw):
        path = f"{field_path}[{i}]"
        if not isinstance(item, Mapping):
            raise ObjectError(path, "must be a toleration object")
        omitted = not item.get("operator")
        operator = item.get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            raise ObjectError(f"{path}.operator", f"unsupported operator {operator!r}; valid: Equal, Exists")
        effect = item.get("effect") or ""
        if effect and effect not in TAINT_EFFECTS:
            raise ObjectError(f"{path}.effect", f"unsupported effect {effect!r}; valid: {', '.join(TAINT_EFFECTS)}")
        key = item.get("key") or ""
        value = item.get("value") or ""
        if operator == "Exists" and value:
            raise ObjectError(f"{path}.value", "must be empty when operator is Exists")
        if not key and operator != "Exists":
            raise ObjectError(f"{path}.operator", "must be Exists when key is empty")
        seconds = item.get("tolerationSeconds")
        if seconds is not None and (not isinstance(seconds, int) or isinstance(seconds, bool)):
            raise ObjectError(f"{path}.tolerationSeconds", "must be an integer")
        out.append(Toleration(str(key), operator, str(value), effect, seconds, omitted))
    return tuple(out)


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: tuple[Toleration, ...], effects: tuple[str, ...]
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect not in effects:
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
