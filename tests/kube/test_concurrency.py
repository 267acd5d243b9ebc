"""ConcurrencyLimit: more binds at once while answers take long for the network's sake
only, back when the server queues them, on a clock the test drives (a closed loop: each
answer is sent when one comes back, ``limit`` under way)."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.cluster.kube.concurrency import HOLD, ConcurrencyLimit


def _drive(limit: ConcurrencyLimit, answer_time: Callable[[int], float], answers: int, *, start: float = 0.0,
           waiting: bool = True) -> tuple[list[int], float]:
    """``answers`` answers, each taking ``answer_time(limit)``; the limits seen and the clock after."""
    now, seen = start, [limit.limit]
    for _ in range(answers):
        seconds = answer_time(limit.limit)
        now += seconds / limit.limit  # ``limit`` under way: one comes back every seconds/limit
        limit.answered(seconds, waiting, now)
        if limit.limit != seen[-1]:
            seen.append(limit.limit)
    return seen, now


def test_a_distant_server_gets_twice_as_many_at_once_up_to_the_most() -> None:
    seen, _ = _drive(ConcurrencyLimit(), lambda limit: 0.2, 3_000)  # 200 ms whatever the load
    assert seen == [32, 64, 128, 256]


def test_a_busy_server_gets_one_try_at_twice_as_many_then_the_same_until_the_hold_is_over() -> None:
    limit = ConcurrencyLimit()
    busy = lambda n: n * 0.001  # noqa: E731 - one at a time, 1 ms each: waits grow with the queue
    seen, now = _drive(limit, busy, 1_000)
    assert seen == [32, 64, 32]
    seen, now = _drive(limit, busy, 1_000, start=now)  # 1 s more: still held
    assert seen == [32]
    seen, _ = _drive(limit, busy, 1_000, start=now + HOLD)
    assert seen == [32, 64, 32]


def test_without_binds_waiting_the_limit_stays() -> None:
    seen, _ = _drive(ConcurrencyLimit(), lambda limit: 0.2, 3_000, waiting=False)
    assert seen == [32]


def test_a_server_that_got_slower_than_when_the_limit_was_accepted_gets_half() -> None:
    limit = ConcurrencyLimit()
    _, now = _drive(limit, lambda n: 0.2, 3_000)
    assert limit.limit == 256
    seen, _ = _drive(limit, lambda n: 0.8, 1_000, start=now, waiting=False)
    assert seen == [256, 128]


def test_answers_to_binds_sent_before_a_change_do_not_count_for_the_new_limit() -> None:
    limit = ConcurrencyLimit(least=64)
    _drive(limit, lambda n: 0.2, 128)  # the settling round, then the round that doubles it
    assert limit.limit == 128
    limit.answered(100.0, True, 1.0)  # sent long before the change: counted, it would fail the try
    seen, _ = _drive(limit, lambda n: 0.2, 3 * 128, start=1.0)  # settling, judged (kept), doubled again
    assert seen == [128, 256]
