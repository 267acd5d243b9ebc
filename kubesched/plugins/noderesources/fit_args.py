"""NodeResourcesFit's name and ``NodeResourcesFitArgs``: decoded, defaulted and validated as upstream.

The scoring strategy (LeastAllocated, MostAllocated or RequestedToCapacityRatio with its
shape), its resources and weights, and the ignored extended resources; what
``kubesched config check`` reports about them. Apart from the plugin because the config
reads the args without running the plugin (the extender's ``managedResources`` too).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...framework.args import Int32, Problems, decode_args, forbidden, invalid, label_name_problems, not_supported, required
from .resource_allocation import DEFAULT_RESOURCES, ResourceSpec, default_resources

__all__ = [
    "NAME",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "UtilizationShapePoint",
    "RequestedToCapacityRatioParam",
    "ScoringStrategy",
    "DEFAULT_SCORING_STRATEGY",
    "FitArgs",
    "parse_args",
]

NAME = "NodeResourcesFit"
LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100



@dataclass(slots=True, frozen=True)
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio function: utilization (0..100) -> score (0..10)."""

    utilization: Int32 = 0
    score: Int32 = 0


@dataclass(slots=True, frozen=True)
class RequestedToCapacityRatioParam:
    shape: tuple[UtilizationShapePoint, ...] = ()


@dataclass(slots=True, frozen=True)
class ScoringStrategy:
    """``config.ScoringStrategy``. A given ``scoringStrategy`` has no default ``type`` (upstream
    rejects ``""``); its resources default to cpu and memory, and a weight 0 to 1."""

    type: str = ""
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", default_resources(self.resources))


DEFAULT_SCORING_STRATEGY = ScoringStrategy(LEAST_ALLOCATED, DEFAULT_RESOURCES)
"""``SetDefaults_NodeResourcesFitArgs`` when the args give no ``scoringStrategy``."""

_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


@dataclass(slots=True, frozen=True)
class FitArgs:
    """``NodeResourcesFitArgs``, decoded and defaulted as upstream; ``strategy``, ``resources``
    and ``shape`` are the scoring strategy's parts as the plugin reads them."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = DEFAULT_SCORING_STRATEGY

    @property
    def strategy(self) -> str:
        return self.scoring_strategy.type

    @property
    def resources(self) -> tuple[ResourceSpec, ...]:
        return self.scoring_strategy.resources

    @property
    def shape(self) -> tuple[tuple[int, int], ...]:
        """RequestedToCapacityRatio's points as (utilization, score 0..10); () for the other strategies."""
        rtc = self.scoring_strategy.requested_to_capacity_ratio
        if self.strategy != REQUESTED_TO_CAPACITY_RATIO or rtc is None:
            return ()
        return tuple((p.utilization, p.score) for p in rtc.shape)

    def validate(self) -> Problems:
        """``ValidateNodeResourcesFitArgs``, in its order."""
        problems: Problems = []
        for i, name in enumerate(self.ignored_resources):
            problems += label_name_problems(name, f"ignoredResources[{i}]")
        for i, group in enumerate(self.ignored_resource_groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                problems.append((path, invalid(group, "resource group name can't contain '/'")))
            problems += label_name_problems(group, path)
        strategy = self.scoring_strategy
        if strategy.type not in _STRATEGY_TYPES:
            problems.append(("scoringStrategy.type", not_supported(strategy.type, _STRATEGY_TYPES)))
        for i, spec in enumerate(strategy.resources):
            if not 0 < spec.weight <= 100:
                detail = f"resource weight of {spec.name} not in valid range (0, 100]"
                problems.append((f"scoringStrategy.resources[{i}].weight", invalid(spec.weight, detail)))
        rtc_path = "scoringStrategy.requestedToCapacityRatio"
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            if strategy.requested_to_capacity_ratio is None:
                problems.append((rtc_path, required("must be specified when type is RequestedToCapacityRatio")))
            else:
                problems += _shape_problems(strategy.requested_to_capacity_ratio.shape, f"{rtc_path}.shape")
        elif strategy.requested_to_capacity_ratio is not None:
            problems.append((rtc_path, forbidden("must be nil when type is not RequestedToCapacityRatio")))
        return problems


def _shape_problems(shape: tuple[UtilizationShapePoint, ...], path: str) -> Problems:
    """``validateFunctionShape``."""
    if not shape:
        return [(path, required("at least one point must be specified"))]
    problems: Problems = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            problems.append((f"{path}[{i}].utilization", invalid(shape[i].utilization, "values must be sorted in increasing order")))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            problems.append((f"{path}[{i}].utilization", invalid(point.utilization, f"not in valid range [0, {MAX_UTILIZATION}]")))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            problems.append((f"{path}[{i}].score", invalid(point.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]")))
    return problems


def parse_args(raw: object) -> FitArgs:
    """``decode_args`` for this plugin's args (the registry decodes them the same way)."""
    return decode_args(FitArgs, raw)
