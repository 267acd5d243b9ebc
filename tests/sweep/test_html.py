"""The sweep's HTML report says who ran it: workers at the start, used and lost, and the
tasks recomputed after their worker was lost, as the command's summary does."""

from __future__ import annotations

from kubesched.sweep.grid import CompareGrid, ReplayGrid
from kubesched.sweep.html import sweep_html
from kubesched.sweep.outcome import SweepOutcome, TaskFailure

from .conftest import NODES, PACKING, PODS, SNAPSHOT


def outcome(**fields: object) -> SweepOutcome:
    """Two tasks that both failed (no result to plot), with the cluster's story in ``fields``."""
    failures = [TaskFailure(0, "a", "KilledWorker: lost"), TaskFailure(1, "b", "KilledWorker: lost")]
    return SweepOutcome(["a", "b"], [None, None], failures, seconds=2.5, **fields)  # type: ignore[arg-type]


def test_the_report_shows_workers_used_and_lost_and_tasks_recomputed() -> None:
    page = sweep_html(ReplayGrid(NODES, (PODS,)), outcome(workers=3, workers_used=2, workers_lost=1, recomputed=4))
    assert ("<p class='workers'>Workers: 3 at the start, 2 used, 1 lost; "
            "4 task(s) recomputed after their worker was lost.</p>") in page


def test_the_compare_report_shows_them_too() -> None:
    page = sweep_html(CompareGrid((SNAPSHOT,), ("default", PACKING)), outcome(workers=1, workers_used=1))
    assert "Workers: 1 at the start, 1 used, 0 lost; 0 task(s) recomputed" in page


def test_a_stranded_sweep_says_why_its_last_tasks_failed() -> None:
    page = sweep_html(ReplayGrid(NODES, (PODS,)), outcome(workers=1, workers_used=1, workers_lost=1, stranded=True))
    assert "The last worker left and none joined in time: the tasks left failed." in page


def test_a_sweep_that_kept_its_workers_is_not_called_stranded() -> None:
    page = sweep_html(ReplayGrid(NODES, (PODS,)), outcome(workers=2, workers_used=2))
    assert "none joined in time" not in page
