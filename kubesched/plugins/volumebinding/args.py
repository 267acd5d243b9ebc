"""``VolumeBindingArgs`` and upstream's validation of them (``ValidateVolumeBindingArgs``)."""

from __future__ import annotations

from dataclasses import dataclass

from ...framework.args import invalid

__all__ = ["VolumeBindingArgs", "UtilizationShapePoint", "STORAGE_CAPACITY_SCORING", "DEFAULT_SHAPE"]

# The StorageCapacityScoring feature gate: off by default in v1.36, so VolumeBinding never scores.
STORAGE_CAPACITY_SCORING = False


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    utilization: int = 0
    score: int = 0


DEFAULT_SHAPE = (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """``bindTimeoutSeconds``: how long PreBind waits for the PV controller (default 600).
    ``shape``: the capacity scoring function; only with StorageCapacityScoring."""

    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] | None = None

    def validate(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if self.bind_timeout_seconds < 0:
            problems.append(("bindTimeoutSeconds", invalid(self.bind_timeout_seconds,
                                                           "invalid BindTimeoutSeconds, should not be a negative value")))
        if self.shape is None:
            return problems
        if not STORAGE_CAPACITY_SCORING:
            problems.append(("shape", "Invalid value: unsupported when feature StorageCapacityScoring is disabled"))
            return problems
        if not self.shape:
            problems.append(("shape", "Required value: at least one point must be specified"))
        for i, point in enumerate(self.shape):
            if i > 0 and point.utilization <= self.shape[i - 1].utilization:
                problems.append((f"shape[{i}].utilization", invalid(point.utilization, "utilization values must be sorted in increasing order")))
                break
            if not 0 <= point.utilization <= 100:
                problems.append((f"shape[{i}].utilization", invalid(point.utilization, "not in valid range [0, 100]")))
            if not 0 <= point.score <= 10:
                problems.append((f"shape[{i}].score", invalid(point.score, "not in valid range [0, 10]")))
        return problems
