"""ConcurrencyLimit: more requests at once while twice as many get twice as much done (the
round trip holds them back), back when they do not (the server, or this process, is the
bottleneck), on a clock the test drives (a closed loop: each request is sent when one
comes back, ``limit`` under way)."""

from __future__ import annotations

from collections.abc import Callable

from kubesched.cluster.kube.concurrency import HOLD, ROUND, ConcurrencyLimit


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
    seen, _ = _drive(ConcurrencyLimit(), lambda limit: 0.2, 10_000)  # 200 ms whatever the load
    assert seen == [32, 64, 128, 256]


def test_a_busy_server_gets_one_try_at_twice_as_many_then_the_same_until_the_hold_is_over() -> None:
    limit = ConcurrencyLimit()
    busy = lambda n: n * 0.001  # noqa: E731 - one at a time, 1 ms each: waits grow with the queue
    seen, now = _drive(limit, busy, 3_000)
    assert seen == [32, 64, 32]
    seen, now = _drive(limit, busy, 10_000, start=now)  # 10 s more: still held
    assert seen == [32]
    seen, _ = _drive(limit, busy, int(HOLD) * 1_000, start=now)  # the hold is over: one more try
    assert seen == [32, 64, 32]


def test_without_binds_waiting_the_limit_stays() -> None:
    seen, _ = _drive(ConcurrencyLimit(), lambda limit: 0.2, 3_000, waiting=False)
    assert seen == [32]


def test_once_nothing_waits_the_limit_comes_back_down() -> None:
    limit = ConcurrencyLimit()
    _, now = _drive(limit, lambda n: 0.2, 10_000)
    assert limit.limit == 256
    seen, _ = _drive(limit, lambda n: 0.2, 10_000, start=now, waiting=False)
    assert seen == [256, 128, 64, 32]


def test_answers_to_requests_sent_before_a_change_do_not_count_for_the_new_limit() -> None:
    limit = ConcurrencyLimit(least=64)
    now = 0.0
    while limit.limit == 64:  # 200 ms whatever the load, until it tries 128
        _, now = _drive(limit, lambda n: 0.2, 1, start=now)
    for _ in range(1_000):  # a flood of answers sent before the change: counted, they would pass the try
        now += 0.0001
        limit.answered(10.0, True, now)
    # Then twice as many at once take twice as long: no more done per second than at 64.
    seen, _ = _drive(limit, lambda n: n * 0.2 / 64, 3_000, start=now)
    assert seen == [128, 64]


def test_a_rate_that_moved_between_rounds_is_no_reason_to_try() -> None:
    # The first rounds are slow for a reason of their own (this process busy scheduling), then
    # 160 answers/s whatever the limit: a try judged against the slow round would be kept.
    answered = 0

    def answer_time(limit: int) -> float:
        nonlocal answered
        answered += 1
        return limit / (40.0 if answered <= 2 * ROUND + 1 else 160.0)

    seen, _ = _drive(ConcurrencyLimit(), answer_time, 2_000)
    assert seen == [32, 64, 32]
