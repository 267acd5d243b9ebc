"""Workers that die during a sweep, on a real Dask cluster: a scheduler and worker processes
of their own (``dask worker --no-nanny``, so that a killed worker stays dead), killed with
SIGKILL while they run tasks. A lost worker's tasks are recomputed elsewhere and reported;
when the last worker is gone the sweep warns and, after its timeout, fails the tasks left
instead of waiting for ever."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from dask.distributed import Client, LocalCluster

from kubesched.cli.main import cli
from kubesched.sweep import Done, run_sweep

from .conftest import NODES, PODS

ROOT = Path(__file__).resolve().parents[2]
TASK_SECONDS = 2.0


def slow(seconds: float) -> float:
    """A task that takes a while (imported by the workers from this module)."""
    time.sleep(seconds)
    return seconds


class Workers:
    """``dask worker`` processes of one scheduler, each killable on its own."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, count: int, client: Client) -> None:
        have = len(client.scheduler_info()["workers"])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        for _ in range(count):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--no-nanny", "--nthreads", "1"],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        client.wait_for_workers(have + count, timeout=60)

    def kill_one_running(self, client: Client) -> str:
        """SIGKILL a worker that is running a task now; its address."""
        pids: dict[str, int] = client.run(os.getpid)
        busy = [w for w, keys in client.processing().items() if keys]
        victim = busy[0] if busy else next(iter(pids))
        os.kill(pids[victim], signal.SIGKILL)
        return victim

    @staticmethod
    def wait_gone(client: Client, address: str) -> None:
        deadline = time.monotonic() + 60
        while address in client.scheduler_info()["workers"] and time.monotonic() < deadline:
            time.sleep(0.1)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def scheduler() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                      silence_logs=logging.CRITICAL) as local:
        yield local


@pytest.fixture
def workers(scheduler: LocalCluster) -> Iterator[Workers]:
    started = Workers(scheduler.scheduler_address)
    try:
        yield started
    finally:
        started.stop()


def test_a_lost_workers_tasks_are_recomputed_and_reported(scheduler: LocalCluster, workers: Workers) -> None:
    with Client(scheduler.scheduler_address) as client:
        workers.start(2, client)
        killed: list[str] = []

        def on_done(task: Done[float, float]) -> None:
            if not killed:
                killed.append(workers.kill_one_running(client))

        outcome = run_sweep(client, slow, [TASK_SECONDS] * 6, on_done=on_done)
    assert outcome.failures == [] and outcome.finished == [TASK_SECONDS] * 6
    assert outcome.workers == 2 and outcome.workers_used == 2 and outcome.workers_lost == 1
    assert outcome.recomputed >= 1 and not outcome.stranded


def test_when_the_last_worker_dies_the_sweep_warns_then_fails_the_tasks_left(scheduler: LocalCluster,
                                                                             workers: Workers) -> None:
    warnings: list[str] = []
    with Client(scheduler.scheduler_address) as client:
        workers.start(1, client)

        def on_done(task: Done[float, float]) -> None:
            if task.completed == 1:
                workers.kill_one_running(client)

        started = time.monotonic()
        outcome = run_sweep(client, slow, [TASK_SECONDS] * 4, on_done=on_done, no_worker_timeout=3.0,
                            warn=warnings.append)
        took = time.monotonic() - started
    assert outcome.stranded and outcome.workers_lost == 1 and len(outcome.finished) == 1
    assert [f.error for f in outcome.failures] == ["no Dask worker left for 3s: not run"] * 3
    assert len(warnings) == 1 and warnings[0].startswith("no Dask worker is left (1 lost): 3 task(s) wait for one")
    assert took < 60  # gave up; did not wait for ever


def test_a_worker_that_joins_in_time_finishes_the_sweep(scheduler: LocalCluster, workers: Workers) -> None:
    warnings: list[str] = []
    with Client(scheduler.scheduler_address) as client:
        workers.start(1, client)

        def on_done(task: Done[float, float]) -> None:
            if task.completed == 1:
                Workers.wait_gone(client, workers.kill_one_running(client))
                workers.start(1, client)  # waits until it joined

        outcome = run_sweep(client, slow, [TASK_SECONDS] * 3, on_done=on_done, no_worker_timeout=120.0,
                            warn=warnings.append)
    assert outcome.failures == [] and len(outcome.finished) == 3 and not outcome.stranded
    assert outcome.workers_lost == 1 and outcome.workers_used == 2


def test_the_command_reports_a_cluster_without_workers_and_gives_up(scheduler: LocalCluster) -> None:
    result = CliRunner().invoke(cli, ["sweep", "--nodes", NODES, "--variant", PODS, "--policy", "FGD",
                                      "--scheduler-address", scheduler.scheduler_address, "--worker-timeout", "2"])
    assert result.exit_code == 1, result.output
    assert "has no workers yet" in result.stderr
    assert "warning: no Dask worker is left (0 lost): 1 task(s) wait for one to join; giving up in 2s" in result.stderr
    assert "failed: FGD seed 42, arrival 130%, pods.csv: no Dask worker left for 2s: not run" in result.stderr
    assert "workers: 0 used, 0 lost; 0 task(s) recomputed" in result.stdout
