"""Leader election over a Lease, against an in-memory Lease API with resourceVersion
conflicts (the behaviour of client-go's LeaderElector)."""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping

import pytest

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.leader import LeaderElector, LeaseRecord, default_identity, micro_time
from tests.apiserver import APIServer

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
LEASE = f"{LEASES}/kube-scheduler"
FAST = {"lease_duration": 1.0, "renew_deadline": 0.5, "retry_period": 0.1}


class FakeApiError(Exception):
    def __init__(self, status: int, reason: str = "") -> None:
        super().__init__(f"{status} {reason}")
        self.status = status
        self.reason = reason


class FakeLeaseApi:
    """Leases by path; PUT must carry the current resourceVersion (409 otherwise)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, object]] = {}
        self.version = 0
        self.down = False  # every request fails as a transport error
        self.conflict_next_put = False
        self.calls: list[tuple[str, str]] = []

    def _stamp(self, obj: dict[str, object]) -> dict[str, object]:
        self.version += 1
        meta = dict(obj.get("metadata", {}))  # type: ignore[call-overload]
        meta["resourceVersion"] = str(self.version)
        obj = {**obj, "metadata": meta}
        return obj

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]:
        self.calls.append((method, path))
        await asyncio.sleep(0)
        if self.down:
            raise FakeApiError(0, "connection refused")
        if method == "GET":
            if path not in self.objects:
                raise FakeApiError(404, "NotFound")
            return copy.deepcopy(self.objects[path])
        assert isinstance(body, dict)
        if method == "POST":
            name = body["metadata"]["name"]
            target = f"{path}/{name}"
            if target in self.objects:
                raise FakeApiError(409, "AlreadyExists")
            self.objects[target] = self._stamp(copy.deepcopy(body))
            return copy.deepcopy(self.objects[target])
        if method == "PUT":
            current = self.objects.get(path)
            if current is None:
                raise FakeApiError(404, "NotFound")
            sent = body.get("metadata", {}).get("resourceVersion")
            if self.conflict_next_put or sent != current["metadata"]["resourceVersion"]:  # type: ignore[index]
                self.conflict_next_put = False
                raise FakeApiError(409, "Conflict")
            self.objects[path] = self._stamp(copy.deepcopy(body))
            return copy.deepcopy(self.objects[path])
        raise AssertionError(method)

    def spec(self) -> dict[str, object]:
        return self.objects[LEASE]["spec"]  # type: ignore[return-value]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run(coro: Awaitable[None]) -> None:
    asyncio.run(asyncio.wait_for(coro, 10))  # type: ignore[arg-type]


async def wait_until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


class Candidate:
    """One elector running in a task, with its callbacks recorded."""

    def __init__(self, api: FakeLeaseApi, identity: str, **options: object) -> None:
        self.elector = LeaderElector(api, identity=identity, **{**FAST, **options})  # type: ignore[arg-type]
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.work_cancelled = False
        self.leaders: list[str] = []
        self.task = asyncio.create_task(self.elector.run(self._lead, self.stopped.set, self.leaders.append))

    async def _lead(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.work_cancelled = True
            raise

    async def cancel(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def test_the_first_candidate_creates_the_lease_and_leads() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a = Candidate(api, "a")
        await a.started.wait()
        spec = api.spec()
        assert spec["holderIdentity"] == "a"
        assert spec["leaseDurationSeconds"] == 1
        assert spec["leaseTransitions"] == 0
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", str(spec["acquireTime"]))
        assert a.elector.is_leader()
        assert a.leaders == ["a"]
        await a.cancel()

    run(scenario())


def test_the_leader_renews_keeping_its_acquire_time() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a = Candidate(api, "a")
        await a.started.wait()
        acquired, version = api.spec()["acquireTime"], api.version
        await wait_until(lambda: api.version >= version + 3)
        assert api.spec()["acquireTime"] == acquired
        assert api.spec()["holderIdentity"] == "a"
        assert api.spec()["leaseTransitions"] == 0
        await a.cancel()

    run(scenario())


def test_two_candidates_race_and_exactly_one_leads() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a, b = Candidate(api, "a"), Candidate(api, "b")
        await wait_until(lambda: a.started.is_set() or b.started.is_set())
        await asyncio.sleep(0.5)  # several retry periods: the standby keeps seeing a valid lease
        assert a.started.is_set() != b.started.is_set()
        leader = a if a.started.is_set() else b
        assert api.spec()["holderIdentity"] == leader.elector.identity
        assert [c.elector.is_leader() for c in (a, b)].count(True) == 1
        await a.cancel()
        await b.cancel()

    run(scenario())


def test_the_standby_takes_over_once_the_silent_leader_lease_expires() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a = Candidate(api, "a", release_on_cancel=False)
        await a.started.wait()
        b = Candidate(api, "b")
        await wait_until(lambda: b.leaders == ["a"])
        await a.cancel()  # stops renewing without releasing
        assert api.spec()["holderIdentity"] == "a"
        await b.started.wait()
        assert api.spec()["holderIdentity"] == "b"
        assert api.spec()["leaseTransitions"] == 1
        assert b.leaders == ["a", "b"]
        await b.cancel()

    run(scenario())


def test_a_standby_does_not_take_over_a_lease_that_keeps_changing() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a = Candidate(api, "a")
        await a.started.wait()
        b = Candidate(api, "b")
        await asyncio.sleep(1.5)  # longer than the lease: a's renewals keep it valid
        assert not b.started.is_set()
        assert api.spec()["holderIdentity"] == "a"
        await a.cancel()
        await b.cancel()

    run(scenario())


def test_renewals_failing_past_the_renew_deadline_stop_leading() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a = Candidate(api, "a")
        await a.started.wait()
        api.down = True
        await a.stopped.wait()
        await a.task  # run returns once the lease is lost
        assert a.work_cancelled

    run(scenario())


def test_cancelling_the_leader_releases_the_lease() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        a = Candidate(api, "a")
        await a.started.wait()
        transitions = api.spec()["leaseTransitions"]
        await a.cancel()
        assert a.work_cancelled and a.stopped.is_set()
        spec = api.spec()
        assert spec["holderIdentity"] == ""
        assert spec["leaseDurationSeconds"] == 1
        assert spec["leaseTransitions"] == transitions
        assert not a.elector.is_leader()

    run(scenario())


def test_a_lease_without_holder_is_taken_at_once() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        await LeaderElector(api, identity="a", lease_duration=60, renew_deadline=10, retry_period=2
                            ).try_acquire_or_renew()
        api.objects[LEASE]["spec"]["holderIdentity"] = ""  # type: ignore[index]
        b = LeaderElector(api, identity="b", **FAST)  # type: ignore[arg-type]
        assert await b.try_acquire_or_renew()  # an empty holder is free at once
        assert api.spec()["leaseTransitions"] == 1

    run(scenario())


def test_a_conflicting_write_loses_the_round() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        clock = Clock()
        other = LeaderElector(api, identity="other", **FAST)  # type: ignore[arg-type]
        assert await other.try_acquire_or_renew()
        me = LeaderElector(api, identity="me", clock=clock, **FAST)  # type: ignore[arg-type]
        assert not await me.try_acquire_or_renew()  # held and, by our clock, valid
        clock.now += 2  # expired by our clock
        api.conflict_next_put = True  # someone wrote between our read and our write
        assert not await me.try_acquire_or_renew()
        assert not me.is_leader()
        assert api.spec()["holderIdentity"] == "other"
        assert await me.try_acquire_or_renew()  # the next round, unopposed, takes it
        assert api.spec()["holderIdentity"] == "me"

    run(scenario())


def test_expiry_is_judged_by_the_local_clock_since_the_record_last_changed() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        clock = Clock()
        other = LeaderElector(api, identity="other", **FAST)  # type: ignore[arg-type]
        assert await other.try_acquire_or_renew()
        me = LeaderElector(api, identity="me", clock=clock, **FAST)  # type: ignore[arg-type]
        assert not await me.try_acquire_or_renew()
        clock.now += 0.9
        assert await other.try_acquire_or_renew()  # renewed: a new record
        assert not await me.try_acquire_or_renew()  # first sight of it restarts our wait
        clock.now += 0.9
        assert not await me.try_acquire_or_renew()  # 1.8 s since the first read, 0.9 since the change
        clock.now += 0.2
        assert await me.try_acquire_or_renew()

    run(scenario())


def test_the_leader_is_unhealthy_once_it_has_not_renewed_past_lease_duration_and_timeout() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        clock = Clock()
        me = LeaderElector(api, identity="me", clock=clock, **FAST)  # type: ignore[arg-type]
        check = me.healthz_check(timeout=20)
        assert check() is True  # a standby is healthy
        assert await me.try_acquire_or_renew()
        clock.now += 1 + 20
        assert check() is True
        clock.now += 0.5
        assert me.leader_healthy(20) is False
        assert check() == "failed election to renew leadership on lease kube-scheduler"

    run(scenario())


def test_an_exception_in_the_leaders_work_ends_the_term_and_is_raised() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        stopped: list[bool] = []

        async def crash() -> None:
            raise RuntimeError("scheduler crashed")

        elector = LeaderElector(api, identity="a", **FAST)  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="scheduler crashed"):
            await elector.run(crash, lambda: stopped.append(True))
        assert stopped == [True]
        assert api.spec()["holderIdentity"] == ""

    run(scenario())


def test_stopped_leading_is_called_even_when_cancelled_before_leading() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        assert await LeaderElector(api, identity="a", **FAST).try_acquire_or_renew()  # type: ignore[arg-type]
        b = Candidate(api, "b")
        await wait_until(lambda: b.leaders == ["a"])
        await b.cancel()
        assert b.stopped.is_set() and not b.started.is_set()
        assert api.spec()["holderIdentity"] == "a"  # a standby releases nothing

    run(scenario())


@pytest.mark.parametrize("durations", [
    {"lease_duration": 10, "renew_deadline": 10, "retry_period": 2},
    {"lease_duration": 15, "renew_deadline": 2.4, "retry_period": 2},
])
def test_invalid_durations_are_rejected_as_upstream(durations: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        LeaderElector(FakeLeaseApi(), identity="a", **durations)


def test_identity_is_the_hostname_and_a_uuid() -> None:
    assert re.fullmatch(r".+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", default_identity())


def test_micro_time_is_rfc3339_utc_with_microseconds() -> None:
    assert micro_time(0.5) == "1970-01-01T00:00:00.500000Z"


@pytest.mark.parametrize(("wall", "text"), [
    (1764159600.0, "2025-11-26T12:20:00.000000Z"),
    (1764159600.123456, "2025-11-26T12:20:00.123456Z"),
    (1764159600.9999996, "2025-11-26T12:20:01.000000Z"),  # rounds into the next second
    (1764159601.0000004, "2025-11-26T12:20:01.000000Z"),
    (1.0000025, "1970-01-01T00:00:01.000002Z"),  # half to even, as datetime.fromtimestamp
    (1.0000035, "1970-01-01T00:00:01.000004Z"),
])
def test_micro_time_rounds_as_datetime_and_follows_the_second(wall: float, text: str) -> None:
    assert micro_time(wall) == text


def test_lease_records_round_trip_through_the_spec() -> None:
    record = LeaseRecord("a", 15, "t0", "t1", 3)
    assert LeaseRecord.from_spec(record.to_spec()) == record


def test_release_rereads_a_lease_whose_renewal_landed_unseen() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        me = LeaderElector(api, identity="me", **FAST)  # type: ignore[arg-type]
        assert await me.try_acquire_or_renew()
        api.objects[LEASE] = api._stamp(api.objects[LEASE])  # a renewal applied, its answer lost
        assert await me.release()
        assert api.spec()["holderIdentity"] == ""

    run(scenario())


def test_release_leaves_a_lease_someone_else_took() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        me = LeaderElector(api, identity="me", **FAST)  # type: ignore[arg-type]
        assert await me.try_acquire_or_renew()
        api.objects[LEASE]["spec"]["holderIdentity"] = "other"  # type: ignore[index]
        api.objects[LEASE] = api._stamp(api.objects[LEASE])
        assert await me.release()
        assert api.spec()["holderIdentity"] == "other"

    run(scenario())


def test_lease_events_say_when_we_became_and_stopped_leading() -> None:
    async def scenario() -> None:
        api = FakeLeaseApi()
        said: list[str] = []
        elector = LeaderElector(api, identity="a", on_lease_event=said.append, **FAST)  # type: ignore[arg-type]
        started = asyncio.Event()

        async def lead() -> None:
            started.set()
            await asyncio.Event().wait()

        task = asyncio.create_task(elector.run(lead, lambda: None))
        await started.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert said == ["a became leader", "a stopped leading"]

    run(scenario())


# -- over HTTP, against the test API server -------------------------------------------
@pytest.fixture
def server() -> Iterator[APIServer]:
    with APIServer() as api_server:
        yield api_server


def lease_spec(server: APIServer) -> dict[str, object]:
    lease = server.get("Lease", "kube-system", "kube-scheduler")
    assert lease is not None
    return lease["spec"]  # type: ignore[return-value]


def run_http(server: APIServer, scenario: Callable[[ApiClient], Awaitable[None]]) -> None:
    async def main() -> None:
        conn = Connection(server=server.url, ssl=None, token=lambda: "t", basic_auth=None, qps=0.0)
        async with ApiClient(conn, timeout=5.0) as client:
            await scenario(client)

    asyncio.run(asyncio.wait_for(main(), 15))


class HttpCandidate:
    def __init__(self, client: ApiClient, identity: str, **options: object) -> None:
        self.elector = LeaderElector(client, identity=identity, **{**FAST, **options})  # type: ignore[arg-type]
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.task = asyncio.create_task(self.elector.run(self._lead, self.stopped.set))

    async def _lead(self) -> None:
        self.started.set()
        await asyncio.Event().wait()

    async def cancel(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def until_http(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_over_http_two_electors_race_and_exactly_one_leads(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a, b = HttpCandidate(client, "a"), HttpCandidate(client, "b")
        await until_http(lambda: a.started.is_set() or b.started.is_set())
        await asyncio.sleep(0.5)
        assert a.started.is_set() != b.started.is_set()
        leader = "a" if a.started.is_set() else "b"
        assert lease_spec(server)["holderIdentity"] == leader
        await a.cancel()
        await b.cancel()

    run_http(server, scenario)


def test_over_http_the_other_takes_over_after_the_lease_expires(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a = HttpCandidate(client, "a", release_on_cancel=False)
        await a.started.wait()
        b = HttpCandidate(client, "b")
        await asyncio.sleep(0.2)
        await a.cancel()
        await b.started.wait()
        spec = lease_spec(server)
        assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
        await b.cancel()

    run_http(server, scenario)


def test_over_http_renewals_failing_past_the_deadline_stop_leading(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a = HttpCandidate(client, "a")
        await a.started.wait()
        server.faults.add(path="leases", status=500, times=None)
        await a.stopped.wait()
        await a.task

    run_http(server, scenario)


def test_over_http_release_on_cancel_frees_the_lease(server: APIServer) -> None:
    async def scenario(client: ApiClient) -> None:
        a = HttpCandidate(client, "a")
        await a.started.wait()
        await a.cancel()
        spec = lease_spec(server)
        assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)

    run_http(server, scenario)
