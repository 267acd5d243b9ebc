"""The timeline mode's x-axis: the trace's virtual time, not the arrived workload.

In the timeline mode pods come and go, so the arrived GPU requests (the fgd mode's
x-axis) only grow while the cluster fills and empties: plotting against them folds the
trace's history onto itself. Level points carry the virtual time they were taken at
(the same for every seed and policy: arrivals are the trace's own), and the end state
after the final departures closes each curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .summary import PolicyCurve

__all__ = ["TimeAxis", "time_axis"]

_UNITS = ((2 * 86400.0, 86400.0, "days"), (2 * 3600.0, 3600.0, "hours"), (120.0, 60.0, "minutes"), (0.0, 1.0, "seconds"))


@dataclass(frozen=True, slots=True)
class TimeAxis:
    """Virtual time in the unit that suits the trace's span."""

    scale: float  # seconds per unit
    unit: str

    @property
    def label(self) -> str:
        return f"Virtual time since the trace's first arrival ({self.unit})"

    def points(self, curve: PolicyCurve, values: Sequence[float], end: float | None) -> tuple[list[float], list[float]]:
        """The curve's (x, y): one point per level, and the end state after the final departures."""
        xs = [t / self.scale for t in curve.times]
        ys = list(values)
        if curve.end is not None and end is not None:
            xs.append(curve.end.time / self.scale)
            ys.append(end)
        return xs, ys


def time_axis(curves: Sequence[PolicyCurve]) -> TimeAxis | None:
    """The time axis when every curve is a timeline replay's; None otherwise (plot against arrived workload)."""
    if not curves or any(c.mode != "timeline" or len(c.times) != len(c.levels) for c in curves):
        return None
    span = max(max([*c.times, *c.series_times, c.end.time if c.end is not None else 0.0], default=0.0) for c in curves)
    return next(TimeAxis(scale, unit) for at_least, scale, unit in _UNITS if span >= at_least)
