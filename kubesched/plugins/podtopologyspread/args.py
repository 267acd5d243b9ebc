"""``PodTopologySpreadArgs``: decoding (strict), defaults and upstream's validation.

``defaultingType`` defaults to ``System`` (``SetDefaults_PodTopologySpreadArgs``), whose
constraints are upstream's ``systemDefaultConstraints``: hostname with maxSkew 3 and
zone with maxSkew 5, both ScheduleAnyway. ``List`` takes ``defaultConstraints`` from
the args. Validation follows ``ValidatePodTopologySpreadArgs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...framework.args import (
    Int32,
    Problems,
    decode_args,
    duplicate,
    forbidden,
    invalid,
    label_name_problems,
    not_supported,
    required,
)
from ...objects.affinity import TopologySpreadConstraint
from ...objects.selectors import NOTHING
from .common import DO_NOT_SCHEDULE, HOSTNAME_LABEL, SCHEDULE_ANYWAY, ZONE_LABEL

__all__ = [
    "LIST_DEFAULTING",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "DefaultConstraint",
    "PodTopologySpreadArgs",
    "parse_args",
]

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

_DEFAULTING_TYPES = (SYSTEM_DEFAULTING, LIST_DEFAULTING)
_WHEN_UNSATISFIABLE = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)  # sorted, as upstream lists them


@dataclass(slots=True, frozen=True)
class DefaultConstraint:
    """A ``v1.TopologySpreadConstraint`` of ``defaultConstraints``, as the args carry it."""

    max_skew: Int32 = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: object = None  # only its presence matters: a default constraint may not have one
    min_domains: Int32 | None = None
    node_affinity_policy: Literal["Honor", "Ignore"] | None = None
    node_taints_policy: Literal["Honor", "Ignore"] | None = None
    match_label_keys: tuple[str, ...] = ()

    def constraint(self) -> TopologySpreadConstraint:
        """The constraint the plugin applies; its selector is the pod's services' (built per pod)."""
        return TopologySpreadConstraint(
            max_skew=self.max_skew,
            topology_key=self.topology_key,
            when_unsatisfiable=self.when_unsatisfiable,
            selector=NOTHING,
            min_domains=self.min_domains,
            node_affinity_policy=self.node_affinity_policy or "Honor",
            node_taints_policy=self.node_taints_policy or "Ignore",
            match_label_keys=self.match_label_keys,
        )


@dataclass(slots=True, frozen=True)
class PodTopologySpreadArgs:
    """``PodTopologySpreadArgs``; ``defaultingType`` left out or empty is ``System``."""

    defaulting_type: str = SYSTEM_DEFAULTING
    default_constraints: tuple[DefaultConstraint, ...] = ()

    def __post_init__(self) -> None:
        if not self.defaulting_type:  # SetDefaults_PodTopologySpreadArgs
            object.__setattr__(self, "defaulting_type", SYSTEM_DEFAULTING)

    @property
    def system_defaulted(self) -> bool:
        return self.defaulting_type == SYSTEM_DEFAULTING

    def effective_default_constraints(self) -> tuple[TopologySpreadConstraint, ...]:
        if self.system_defaulted:
            return SYSTEM_DEFAULT_CONSTRAINTS
        return tuple(c.constraint() for c in self.default_constraints)

    def validate(self) -> Problems:
        """``ValidatePodTopologySpreadArgs``, then the constraints' own fields (minDomains)."""
        problems: Problems = []
        if self.defaulting_type not in _DEFAULTING_TYPES:
            problems.append(("defaultingType", not_supported(self.defaulting_type, _DEFAULTING_TYPES)))
        elif self.system_defaulted and self.default_constraints:
            problems.append(("defaultingType", invalid(self.defaulting_type, "when .defaultConstraints are not empty")))
        for i, c in enumerate(self.default_constraints):
            path = f"defaultConstraints[{i}]"
            if c.max_skew <= 0:
                problems.append((f"{path}.maxSkew", invalid(c.max_skew, "not in valid range (0, inf)")))
            if not c.topology_key:
                problems.append((f"{path}.topologyKey", required("can not be empty")))
            else:
                problems += label_name_problems(c.topology_key, f"{path}.topologyKey")
            if not c.when_unsatisfiable:
                problems.append((f"{path}.whenUnsatisfiable", required("can not be empty")))
            elif c.when_unsatisfiable not in _WHEN_UNSATISFIABLE:
                problems.append((f"{path}.whenUnsatisfiable", not_supported(c.when_unsatisfiable, _WHEN_UNSATISFIABLE)))
            if c.label_selector is not None:
                problems.append((f"{path}.labelSelector", forbidden("constraint must not define a selector, as they deduced for each pod")))
            if any((c.topology_key, c.when_unsatisfiable) == (o.topology_key, o.when_unsatisfiable) for o in self.default_constraints[:i]):
                problems.append((path, duplicate(f"{{{c.topology_key}, {c.when_unsatisfiable}}}")))
        for i, c in enumerate(self.default_constraints):
            if c.min_domains is not None and c.min_domains <= 0:
                problems.append((f"defaultConstraints[{i}].minDomains", invalid(c.min_domains, "must be greater than zero")))
        return problems


def parse_args(raw: object) -> PodTopologySpreadArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(PodTopologySpreadArgs, raw)
