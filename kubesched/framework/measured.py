"""Timing extension points for upstream's ``framework_extension_point_duration_seconds``.

``Framework`` methods that run an extension point are wrapped with ``measured``: when the
framework has an observer (the live mode's metrics), each run is timed and reported as
(point, status code, seconds); without one (``simulate``) the wrapper only checks an
attribute, so the simulator pays nothing measurable.
"""

from __future__ import annotations

import functools
import time
from typing import Callable, Concatenate, ParamSpec, Protocol, TypeVar

from .status import Code, Status

__all__ = ["MEASURED_METHODS", "PluginObserver", "code_label", "count_evaluations", "PointObserver", "measured", "first_status", "second_status", "no_status", "own_status"]

PointObserver = Callable[[str, str, float], None]
"""Told of one extension point run: its name as upstream labels it, the status code's label, seconds."""
PluginObserver = Callable[[str, str, str, float], None]
"""Told of one plugin's run in a sampled cycle: plugin, extension point, status code label, seconds."""


def count_evaluations(evaluations: dict[tuple[str, str], int], plugin: str, point: str, count: int) -> None:
    """Add ``count`` evaluations of ``plugin`` at ``point`` (upstream's ``plugin_evaluation_total``:
    one per plugin call, so one per node asked at Filter and Score). A batch plugin asked
    about k nodes adds k in one step."""
    key = (plugin, point)
    evaluations[key] = evaluations.get(key, 0) + count


class SkipTally:
    """Evaluations at one extension point, tallied by the set of plugins skipped.

    In a cycle that runs the point to its end, every plugin of the point but the skipped
    ones is evaluated once (or once per node at Score): the cycle adds to one count, that
    of its skip set (one dict update, where counting plugin by plugin cost a dozen). The
    scrape expands the counts per plugin (``add_to``); a pod kind skips few sets."""

    __slots__ = ("point", "names", "by_skip")

    def __init__(self, point: str, names: list[str]) -> None:
        self.point = point
        self.names = names
        self.by_skip: dict[frozenset[str], int] = {}

    def per_plugin(self) -> dict[str, int]:
        """The tallied evaluations per plugin, in the point's plugin order (none left out)."""
        out = dict.fromkeys(self.names, 0)
        for skipped, count in list(self.by_skip.items()):
            for name in self.names:
                if name not in skipped:
                    out[name] += count
        return out


_CODE_LABELS: tuple[str, ...] = tuple(code.label for code in sorted(Code))
"""Each code's label by its value (a tuple index costs less than the enum's ``label``)."""


def code_label(status: Status | None) -> str:
    return _CODE_LABELS[status.code] if status is not None else "Success"

P = ParamSpec("P")
R = TypeVar("R")


class Observed(Protocol):
    observe_point: PointObserver | None


S = TypeVar("S", bound=Observed)


def own_status(result: object) -> Status | None:
    return result if isinstance(result, Status) else None


def first_status(result: object) -> Status | None:
    return result[0] if isinstance(result, tuple) and isinstance(result[0], Status) else None


def second_status(result: object) -> Status | None:
    return result[1] if isinstance(result, tuple) and isinstance(result[1], Status) else None


def no_status(result: object) -> Status | None:
    return None


MEASURED_METHODS: set[str] = set()
"""The names of the methods ``measured`` wrapped: an owner with no observer may call their
bodies directly (``Framework`` does, sparing every extension point the wrapper's call)."""


def measured(point: str, status_of: Callable[[object], Status | None]
             ) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    def decorate(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        MEASURED_METHODS.add(method.__name__)
        clock = time.perf_counter  # looked up once: the wrapper runs at every point of every cycle
        labels = _CODE_LABELS

        def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            observer = self.observe_point
            if observer is None:
                return method(self, *args, **kwargs)
            start = clock()
            result = method(self, *args, **kwargs)
            status = status_of(result)
            observer(point, labels[status.code if status is not None else 0], clock() - start)
            return result

        functools.update_wrapper(run, method)
        return run

    return decorate

