"""ParkingPool: run's binding workers, bounded, except for threads parked in a long wait
(upstream's binding goroutines have no bound; one blocked in PreBind holds up nobody)."""

from __future__ import annotations

import threading

import pytest

from kubesched.cluster.kube.parking_pool import ParkingPool, parked

WAIT = 10.0  # a bound on every wait below, so a broken pool fails instead of hanging


def test_no_more_than_the_bound_runs_at_once() -> None:
    pool = ParkingPool(2)
    release, started = threading.Event(), threading.Semaphore(0)

    def busy() -> None:
        started.release()
        release.wait(WAIT)

    futures = [pool.submit(busy) for _ in range(3)]
    assert started.acquire(timeout=WAIT) and started.acquire(timeout=WAIT)
    assert not futures[2].running() and pool.threads == 2
    release.set()
    assert [f.result(WAIT) for f in futures] == [None, None, None]
    pool.shutdown()


def test_a_parked_thread_lets_queued_work_start() -> None:
    pool = ParkingPool(1)
    in_wait, release = threading.Event(), threading.Event()

    def waits() -> str:
        with parked():
            in_wait.set()
            release.wait(WAIT)
        return "waited"

    waiting = pool.submit(waits)
    assert in_wait.wait(WAIT)
    assert pool.submit(lambda: "other").result(WAIT) == "other"  # while the first is still parked
    assert not waiting.done()
    release.set()
    assert waiting.result(WAIT) == "waited"
    pool.shutdown()


def test_a_thread_back_from_parking_leaves_when_the_pool_is_over_its_bound() -> None:
    pool = ParkingPool(1)
    in_wait, release, other_busy, other_release = (threading.Event() for _ in range(4))

    def waits() -> None:
        with parked():
            in_wait.set()
            release.wait(WAIT)

    def busy() -> None:
        other_busy.set()
        other_release.wait(WAIT)

    first = pool.submit(waits)
    assert in_wait.wait(WAIT)
    second = pool.submit(busy)
    assert other_busy.wait(WAIT) and pool.threads == 2
    release.set()
    first.result(WAIT)
    other_release.set()
    second.result(WAIT)
    pool.submit(lambda: None).result(WAIT)
    assert pool.threads == 1
    pool.shutdown()


def test_shutdown_cancels_queued_work_and_refuses_more() -> None:
    pool = ParkingPool(1)
    started, release = threading.Event(), threading.Event()

    def busy() -> bool:
        started.set()
        return release.wait(WAIT)

    running = pool.submit(busy)
    assert started.wait(WAIT)
    queued = pool.submit(lambda: None)
    pool.shutdown()
    assert queued.cancelled()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)
    release.set()
    assert running.result(WAIT) is True


def test_parking_outside_a_pool_does_nothing() -> None:
    with parked():
        pass
