"""Events as `kubesched run` writes them under load (issue 26): written while binds are
still in flight, drained within a grace period on stop (what is left counted as
dropped and logged), and the event queue held near its mark when binding completions,
not the scheduling loop, are what fills it."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from kubesched.cluster.kube.driver import LiveOptions, LiveScheduler
from kubesched.cluster.kube.events import BroadcasterStats, EventBroadcaster
from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, events, node, pod, wait_until

BINDINGS = "/binding$"
EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events$"


def _bound(server: APIServer) -> int:
    return sum(1 for p in server.list("Pod") if (p.get("spec") or {}).get("nodeName"))


def _scheduled_events(server: APIServer) -> int:
    return sum(1 for e in events(server) if e.get("reason") == "Scheduled")


def _cluster(server: APIServer, pods: int) -> None:
    for i in range(4):
        server.create(node(f"n{i}", cpu="1000", pods=1000))
    for i in range(pods):
        server.create(pod(f"p{i}", cpu="10m"))


def test_events_are_written_while_a_backlog_of_binds_is_still_in_flight(server: APIServer, kubeconfig: Path,
                                                                        started: list[Kubesched]) -> None:
    # Every bind takes 0.1 s: 400 pods keep all the binding tasks busy for over a second.
    server.faults.add(method="POST", path=BINDINGS, status=None, times=None, delay=0.1)
    _cluster(server, 400)
    sched = Kubesched(server, kubeconfig).start()
    started.append(sched)
    wait_until(lambda: _bound(server) >= 200, 30, "half the pods bound")
    written, bound = _scheduled_events(server), _bound(server)
    assert bound < 400, "the binds finished before the check: the test proves nothing"
    assert written >= bound // 4, (written, bound)
    wait_until(lambda: _scheduled_events(server) == 400, 30, "every Scheduled event")
    assert_invariants(server, sched)


def _broadcaster_stats(sched: Kubesched) -> BroadcasterStats:
    assert sched.live is not None and isinstance(sched.live.event_room, EventBroadcaster)
    return sched.live.event_room.stats


def test_on_stop_the_queued_events_are_written_before_exit(server: APIServer, kubeconfig: Path) -> None:
    # Each event takes 0.3 s: once the 150 pods are bound most of their events are still queued.
    server.faults.add(method="POST", path=EVENTS, status=None, times=None, delay=0.3)
    _cluster(server, 150)
    sched = Kubesched(server, kubeconfig, options=LiveOptions(binding_workers=4, events_grace=10.0)).start()
    wait_until(lambda: _bound(server) == 150, 30, "every pod bound")
    assert _scheduled_events(server) < 100, "the events were written before the stop: the test proves nothing"
    assert sched.stop() == 0
    stats = _broadcaster_stats(sched)
    assert (_scheduled_events(server), stats.dropped, stats.lost_at_exit) == (150, 0, 0)


def test_events_left_after_the_grace_period_are_counted_as_dropped_and_logged(
        server: APIServer, kubeconfig: Path, caplog: pytest.LogCaptureFixture) -> None:
    server.faults.add(method="POST", path=EVENTS, status=None, times=None, delay=0.3)
    _cluster(server, 150)
    sched = Kubesched(server, kubeconfig, options=LiveOptions(binding_workers=4, events_grace=0.5)).start()
    wait_until(lambda: _bound(server) == 150, 30, "every pod bound")
    with caplog.at_level(logging.INFO, logger="kubesched.cluster.kube.events"):
        assert sched.stop() == 0
    stats = _broadcaster_stats(sched)
    written = _scheduled_events(server)
    assert stats.lost_at_exit > 0 and stats.dropped == stats.lost_at_exit
    # A write cut off at exit may still have reached the server: it counts as lost all the same.
    assert 150 <= written + stats.lost_at_exit <= 150 + 16
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("event writer stopped")]
    assert line == (f"event writer stopped: {stats.written} events written, {stats.dropped} dropped "
                    f"({stats.lost_at_exit} not written at exit)")


def test_binding_completions_wait_for_room_in_the_event_queue(server: APIServer, kubeconfig: Path,
                                                              started: list[Kubesched]) -> None:
    # Events are slow (0.2 s each), the queue's mark is 40: the scheduling loop places all 600
    # pods before their binds complete, and it is the binds that must wait.
    server.faults.add(method="POST", path=EVENTS, status=None, times=None, delay=0.2)
    _cluster(server, 600)
    sched = Kubesched(server, kubeconfig, options=LiveOptions(binding_workers=4, events_high_water=40)).start()
    started.append(sched)

    def sample(live: LiveScheduler) -> tuple[int, int]:
        assert isinstance(live.event_room, EventBroadcaster) and live.bindings is not None
        return live.event_room.backlog, live.bindings.sending

    most = most_sending = 0
    while _scheduled_events(server) < 600:
        backlog, sending = sched.call(sample)
        most, most_sending = max(most, backlog), max(most_sending, sending)
        assert sched.running
        time.sleep(0.02)
    # The mark, and past it at most the binds that were under way when it was reached.
    assert 40 <= most <= 40 + most_sending < 400, (most, most_sending)
    assert _broadcaster_stats(sched).waits > 0
    assert_invariants(server, sched)
