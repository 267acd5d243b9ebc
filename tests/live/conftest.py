from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.apiserver import APIServer
from tests.live.harness import Figures, Kubesched, invariants, write_kubeconfig

# Every live test's end-of-test figures, summed up after the run (the issue asks for them).
_FIGURES: list[tuple[Figures, int]] = []
# Events each scheduler a test started had not written when it stopped (issue 26).
_LOST_AT_EXIT: list[int] = []


@pytest.fixture
def server() -> Iterator[APIServer]:
    srv = APIServer(bookmark_interval=0.5, tls=True).start()  # over TLS, verified against the test CA
    srv.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    srv.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def kubeconfig(server: APIServer, tmp_path: Path) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", server.url)


@pytest.fixture
def started() -> Iterator[list[Kubesched]]:
    """Schedulers a test started, stopped after it whatever happened."""
    running: list[Kubesched] = []
    yield running
    for sched in running:
        if sched.running:
            sched.stop()
        if sched.events_lost_at_exit is not None:
            _LOST_AT_EXIT.append(sched.events_lost_at_exit)


def assert_invariants(server: APIServer, sched: Kubesched | None, expect_condition: bool = True) -> None:
    """Every pod bound once or pending with its condition, no node over allocatable, no pod lost."""
    figures = invariants(server, sched, expect_condition=expect_condition)
    _FIGURES.append((figures, sum(rule.hits for rule in server.faults.rules)))
    assert figures.lost == 0, figures
    assert figures.double_bound == 0, figures
    assert figures.overcommitted == 0, figures
    assert not figures.wrong_condition, figures
    assert figures.events_dropped == 0, figures


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _FIGURES:
        return
    pods = sum(f.pods for f, _ in _FIGURES)
    faults = sum(n for _, n in _FIGURES)
    lost = sum(f.lost for f, _ in _FIGURES)
    double = sum(f.double_bound for f, _ in _FIGURES)
    over = sum(f.overcommitted for f, _ in _FIGURES)
    events_dropped = sum(f.events_dropped for f, _ in _FIGURES)
    terminalreporter.write_line(
        f"live invariants: {len(_FIGURES)} checks, {pods} pods, {faults} injected faults served; "
        f"lost {lost}, double-bound {double}, overcommitted nodes {over}, events dropped {events_dropped}, "
        f"events lost at exit {sum(_LOST_AT_EXIT)} (of {len(_LOST_AT_EXIT)} schedulers stopped)")
