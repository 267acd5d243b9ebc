"""Progress on stderr for the slow parts of ``simulate``: loading a dump, scheduling.

Nothing is shown for a phase that ends within ``delay`` seconds, so small runs stay
quiet. On a terminal a phase that lasts longer gets a transient rich bar (or a spinner
when its size is unknown); otherwise (a pipe, a CI log) a few plain lines: when it
starts showing, at most one line every ``every`` seconds while it runs, and when it ends.
A timer thread starts the display, since a big file is parsed in one call with no
chance to report in between.
"""

from __future__ import annotations

import threading
import time
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["PhaseProgress"]


class PhaseProgress:
    """One phase at a time: ``start(label, total)``, ``update(done)``, ``finish()``."""

    def __init__(self, stream: TextIO, terminal: bool, delay: float = 1.5, every: float = 10.0,
                 enabled: bool = True) -> None:
        self._stream = stream
        self._terminal = terminal
        self._delay = delay
        self._every = every
        self._enabled = enabled
        self._lock = threading.Lock()
        self._label = ""
        self._unit = ""
        self._total: int | None = None
        self._done = 0
        self._started = 0.0
        self._shown = False
        self._last_line = 0.0
        self._timer: threading.Timer | None = None
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def start(self, label: str, total: int | None = None, unit: str = "") -> None:
        self.finish()
        if not self._enabled:
            return
        with self._lock:
            self._label, self._total, self._unit, self._done = label, total, unit, 0
            self._started = time.monotonic()
            self._shown = False
            self._timer = threading.Timer(self._delay, self._show)
            self._timer.daemon = True
            self._timer.start()

    def update(self, done: int) -> None:
        if not self._enabled:
            return
        with self._lock:
            self._done = done
            if not self._shown:
                return
            if self._bar is not None and self._task is not None:
                self._bar.update(self._task, completed=done)
            elif time.monotonic() - self._last_line >= self._every:
                self._line()

    def finish(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._bar is not None:
                self._bar.stop()
                self._bar = self._task = None
            elif self._shown:
                elapsed = time.monotonic() - self._started
                self._stream.write(f"{self._label}: done in {elapsed:.1f}s\n")
                self._stream.flush()
            self._shown = False

    def _show(self) -> None:
        with self._lock:
            if self._timer is None:  # finished meanwhile
                return
            self._shown = True
            if self._terminal:
                columns = [SpinnerColumn(), TextColumn(self._label)]
                if self._total is not None:
                    columns += [BarColumn(), MofNCompleteColumn()]
                elif self._unit:  # a count without a total (objects listed so far)
                    columns.append(TextColumn("{task.completed:,.0f} " + self._unit.replace("[", "\\[")))
                columns.append(TimeElapsedColumn())
                self._bar = Progress(*columns, console=Console(file=self._stream), transient=True)
                self._task = self._bar.add_task(self._label, total=self._total, completed=self._done)
                self._bar.start()
            else:
                self._line()

    def _line(self) -> None:
        self._last_line = time.monotonic()
        if self._total is not None:
            count = f" {self._done}/{self._total}{' ' + self._unit if self._unit else ''}"
        else:
            count = f" {self._done} {self._unit}" if self._unit else ""
        self._stream.write(f"{self._label}...{count}\n")
        self._stream.flush()
