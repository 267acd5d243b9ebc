"""``PodTopologySpreadArgs``: decoding (strict), defaults and upstream's validation.

``defaultingType`` defaults to ``System`` (``SetDefaults_PodTopologySpreadArgs``), whose
constraints are upstream's ``systemDefaultConstraints``: hostname with maxSkew 3 and
zone with maxSkew 5, both ScheduleAnyway. ``List`` takes ``defaultConstraints`` from
the args. Validation follows ``ValidatePodTopologySpreadArgs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...framework.args import ArgsError, expect_fields, get_list, get_str
from ...objects.affinity import (
    TopologySpreadConstraint,
    parse_topology_spread_constraints,
)
from ...objects.errors import ObjectError
from ...objects.selectors import NOTHING
from .common import DO_NOT_SCHEDULE, HOSTNAME_LABEL, SCHEDULE_ANYWAY, ZONE_LABEL

__all__ = ["LIST_DEFAULTING", "SYSTEM_DEFAULTING", "SYSTEM_DEFAULT_CONSTRAINTS", "PodTopologySpreadArgs", "parse_args"]

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(
        max_skew=3,
        topology_key=HOSTNAME_LABEL,
        when_unsatisfiable=SCHEDULE_ANYWAY,
        selector=NOTHING,
        min_domains=None,
        node_affinity_policy="Honor",
        node_taints_policy="Ignore",
        match_label_keys=(),
    ),
    TopologySpreadConstraint(
        max_skew=5,
        topology_key=ZONE_LABEL,
        when_unsatisfiable=SCHEDULE_ANYWAY,
        selector=NOTHING,
        min_domains=None,
        node_affinity_policy="Honor",
        node_taints_policy="Ignore",
        match_label_keys=(),
    ),
)

_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)

# metav1validation.ValidateLabelName: a qualified name, with an optional DNS-subdomain prefix.
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _label_name_problem(name: str) -> str | None:
    parts = name.split("/")
    if len(parts) == 1:
        prefix, short = "", parts[0]
    elif len(parts) == 2:
        prefix, short = parts
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return "prefix part must be a lowercase RFC 1123 subdomain"
    else:
        return (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character with an optional DNS subdomain prefix and '/'"
        )
    if not short:
        return "name part must be non-empty"
    if len(short) > 63:
        return "name part must be no more than 63 characters"
    if not _NAME_PART.match(short):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )
    return None


@dataclass(slots=True, frozen=True)
class PodTopologySpreadArgs:
    defaulting_type: str = SYSTEM_DEFAULTING
    default_constraints: tuple[TopologySpreadConstraint, ...] = ()

    @property
    def system_defaulted(self) -> bool:
        return self.defaulting_type == SYSTEM_DEFAULTING

    def effective_default_constraints(self) -> tuple[TopologySpreadConstraint, ...]:
        if self.system_defaulted:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return self.default_constraints


def parse_args(raw: object) -> PodTopologySpreadArgs:
    """Decode and validate; raises ``ArgsError`` naming the first bad field."""
    fields = expect_fields(raw, ("defaultConstraints", "defaultingType"))
    defaulting = get_str(fields, "defaultingType", "") or SYSTEM_DEFAULTING
    listed = get_list(fields, "defaultConstraints")
    problems: list[tuple[str, str]] = []
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        problems.append(("defaultingType", f'Unsupported value: "{defaulting}": supported values: "System", "List"'))
    elif defaulting == SYSTEM_DEFAULTING and listed:
        problems.append(("defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty'))
    seen: dict[tuple[str, str], int] = {}
    parsed: list[TopologySpreadConstraint] = []
    for i, raw_item in enumerate(listed):
        path = f"defaultConstraints[{i}]"
        item = expect_fields(raw_item, _CONSTRAINT_FIELDS, path)
        max_skew = item.get("maxSkew", 0)
        if not isinstance(max_skew, int) or isinstance(max_skew, bool):
            raise ArgsError(f"{path}.maxSkew", f"must be an integer, got {max_skew!r}")
        if max_skew <= 0:
            problems.append((f"{path}.maxSkew", f"Invalid value: {max_skew}: not in valid range (0, inf)"))
        key = get_str(item, "topologyKey", "", f"{path}.")
        if not key:
            problems.append((f"{path}.topologyKey", "Required value: can not be empty"))
        else:
            problem = _label_name_problem(key)
            if problem is not None:
                problems.append((f"{path}.topologyKey", f'Invalid value: "{key}": {problem}'))
        when = get_str(item, "whenUnsatisfiable", "", f"{path}.")
        if not when:
            problems.append((f"{path}.whenUnsatisfiable", "Required value: can not be empty"))
        elif when not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            problems.append(
                (f"{path}.whenUnsatisfiable", f'Unsupported value: "{when}": supported values: "DoNotSchedule", "ScheduleAnyway"')
            )
        if item.get("labelSelector") is not None:
            problems.append((f"{path}.labelSelector", "Forbidden: constraint must not define a selector, as they deduced for each pod"))
        pair = (key, when)
        if pair in seen:
            problems.append((f"defaultConstraints[{i}]", f'Duplicate value: "{{{key}, {when}}}"'))
        seen.setdefault(pair, i)
        if problems:
            continue
        try:
            parsed.extend(parse_topology_spread_constraints([dict(item)], "defaultConstraints"))
        except ObjectError as err:
            field = err.field.replace("defaultConstraints[0]", path, 1)
            raise ArgsError(field, err.message) from None
    if problems:
        field, message = problems[0]
        raise ArgsError(field, message)
    return PodTopologySpreadArgs(defaulting, tuple(parsed))
