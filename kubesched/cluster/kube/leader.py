"""Leader election over a ``coordination.k8s.io/v1`` Lease, as client-go's LeaderElector.

Only one kubesched of a replicated deployment may schedule: two schedulers binding the
same pods would each trust a cache the other invalidates. client-go's algorithm, kept
here step for step (tools/leaderelection/leaderelection.go, resourcelock/leaselock.go):

* A candidate judges a lease by its *local* clock only: the record's timestamps come from
  other machines, so they serve only to notice that the record changed. A lease held by
  someone else counts as expired once ``leaseDurationSeconds`` passed on our clock since
  we last saw the record change; then we may take it over.
* Writes are optimistic: a PUT carries the resourceVersion we read, and a 409 means
  someone else wrote first, so this round is lost.
* The leader renews every ``retry_period``; if no renewal succeeds within
  ``renew_deadline`` it has lost the lease and stops (kube-scheduler then exits).
* ``leaseTransitions`` counts holder changes; ``acquireTime`` stays put across renewals.
* On cancellation the leader releases the lease (empty holder, 1 s duration) so a
  standby takes over at once instead of after a full lease duration (kube-scheduler
  sets ReleaseOnCancel).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

__all__ = [
    "HEALTHZ_TIMEOUT",
    "JITTER_FACTOR",
    "ApiRequester",
    "LeaderElector",
    "LeaseRecord",
    "default_identity",
    "micro_time",
    "status_of",
]

log = logging.getLogger(__name__)

#: client-go's JitterFactor: acquisition retries wait retry_period * (1 + U[0, 1.2)).
JITTER_FACTOR = 1.2

#: kube-scheduler's HealthzAdaptor tolerance past the lease duration (options.go).
HEALTHZ_TIMEOUT = 20.0


class ApiRequester(Protocol):
    """The part of ``kubesched.cluster.kube.client.ApiClient`` these components use:
    a decoded-JSON request that raises an error carrying the HTTP ``status`` (0 for a
    transport failure)."""

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]: ...


def status_of(error: BaseException) -> int | None:
    """The HTTP status of an API error (``ApiError.status``), None for anything else."""
    status = getattr(error, "status", None)
    return status if isinstance(status, int) else None


_SECOND: list[tuple[float, str]] = [(-1.0, "")]  # the last whole second formatted, and its text


def micro_time(wall_seconds: float) -> str:
    """metav1.MicroTime's JSON form: RFC 3339 in UTC with microseconds, rounded half to
    even as ``datetime.fromtimestamp`` rounds. Every event carries one or two, so the
    date and time of day are formatted once per second, not per call."""
    fraction, whole = math.modf(wall_seconds)
    micros = round(fraction * 1e6)
    if micros >= 1_000_000:
        whole += 1.0
        micros -= 1_000_000
    elif micros < 0:
        whole -= 1.0
        micros += 1_000_000
    second, text = _SECOND[0]
    if second != whole:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _SECOND[0] = (whole, text)
    return f"{text}.{micros:06d}Z"


def default_identity() -> str:
    """kube-scheduler's lock identity: the hostname plus a uniquifier, so two processes
    on one host never both believe they hold the lease."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """client-go's LeaderElectionRecord as a Lease spec carries it."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: Mapping[str, object]) -> LeaseRecord:
        def text(key: str) -> str | None:
            value = spec.get(key)
            return value if isinstance(value, str) else None

        def number(key: str) -> int:
            value = spec.get(key)
            return value if isinstance(value, int) else 0

        return cls(text("holderIdentity") or "", number("leaseDurationSeconds"), text("acquireTime"),
                   text("renewTime"), number("leaseTransitions"))

    def to_spec(self) -> dict[str, object]:
        # LeaderElectionRecordToLeaseSpec sets every field, the holder even when empty.
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.leader_transitions,
        }


class LeaderElector:
    """Campaigns for, holds and releases one Lease; ``run`` drives the callbacks."""

    def __init__(self, requester: ApiRequester, *, namespace: str = "kube-system", name: str = "kube-scheduler",
                 identity: str, lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, release_on_cancel: bool = True,
                 clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time,
                 rng: Callable[[], float] = random.random,
                 on_lease_event: Callable[[str], None] | None = None) -> None:
        # NewLeaderElector's validation.
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if lease_duration <= 0 or renew_deadline <= 0 or retry_period <= 0:
            raise ValueError("leaseDuration, renewDeadline and retryPeriod must be greater than zero")
        if not identity:
            raise ValueError("Lock identity is empty")
        self._requester = requester
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self._clock = clock
        self._wall = wall_clock
        self._rng = rng
        self._on_lease_event = on_lease_event
        self._lease: dict[str, object] | None = None  # the Lease object last read or written
        self._observed = LeaseRecord()
        self._observed_time = 0.0
        self._reported_leader = ""
        self._on_new_leader: Callable[[str], None] | None = None

    # -- state ---------------------------------------------------------------------
    @property
    def lease(self) -> Mapping[str, object] | None:
        """The Lease object last read or written (None before the first)."""
        return self._lease

    @property
    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def observed_record(self) -> LeaseRecord:
        return self._observed

    def get_leader(self) -> str:
        """The last observed holder ("" before any observation)."""
        return self._observed.holder_identity

    def is_leader(self) -> bool:
        return self._observed.holder_identity == self.identity

    def leader_healthy(self, timeout: float = HEALTHZ_TIMEOUT) -> bool:
        """client-go's HealthzAdaptor: a leader that has not renewed for lease duration +
        ``timeout`` should have exited already (deadlock...), so it reports unhealthy;
        a standby is always healthy."""
        if not self.is_leader():
            return True
        return self._clock() - self._observed_time <= self.lease_duration + timeout

    def healthz_check(self, timeout: float = HEALTHZ_TIMEOUT) -> Callable[[], bool | str]:
        """The ``leaderElection`` check for the health endpoints."""

        def check() -> bool | str:
            if self.leader_healthy(timeout):
                return True
            return f"failed election to renew leadership on lease {self.name}"

        return check

    def _set_observed(self, record: LeaseRecord) -> None:
        self._observed = record
        self._observed_time = self._clock()

    def _lease_valid(self, now: float) -> bool:
        return self._observed_time + self._observed.lease_duration_seconds > now

    # -- the Lease API -------------------------------------------------------------
    @property
    def _collection(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"

    async def _get(self) -> LeaseRecord:
        lease = await self._requester.request("GET", f"{self._collection}/{self.name}", timeout=self.renew_deadline)
        self._lease = lease
        spec = lease.get("spec")
        return LeaseRecord.from_spec(spec if isinstance(spec, Mapping) else {})

    async def _create(self, record: LeaseRecord) -> None:
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace}, "spec": record.to_spec()}
        self._lease = await self._requester.request("POST", self._collection, body=body,
                                                    timeout=self.renew_deadline)

    async def _update(self, record: LeaseRecord) -> None:
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = dict(self._lease)  # keeps metadata.resourceVersion: the PUT is conditional
        body["spec"] = record.to_spec()
        self._lease = await self._requester.request("PUT", f"{self._collection}/{self.name}", body=body,
                                                    timeout=self.renew_deadline)

    # -- one round -----------------------------------------------------------------
    async def try_acquire_or_renew(self) -> bool:
        """client-go's tryAcquireOrRenew: True when we hold the lease afterwards."""
        now = self._clock()
        stamp = micro_time(self._wall())
        desired = LeaseRecord(self.identity, int(self.lease_duration), stamp, stamp, 0)

        # 1. Fast path: the leader updates optimistically from the record it last saw.
        if self.is_leader() and self._lease_valid(now):
            renewed = replace(desired, acquire_time=self._observed.acquire_time,
                              leader_transitions=self._observed.leader_transitions)
            try:
                await self._update(renewed)
            except Exception as error:  # noqa: BLE001 - any failure falls back to the slow path
                log.error("Failed to update lock %s optimistically: %s, falling back to slow path",
                          self.describe, error)
            else:
                self._set_observed(renewed)
                return True

        # 2. Obtain or create the record.
        try:
            current = await self._get()
        except Exception as error:  # noqa: BLE001
            if status_of(error) != 404:
                log.error("error retrieving resource lock %s: %s", self.describe, error)
                return False
            try:
                await self._create(desired)
            except Exception as create_error:  # noqa: BLE001
                log.error("error initially creating leader election record: %s", create_error)
                return False
            self._set_observed(desired)
            return True

        # 3. A changed record restarts our expiry clock for it.
        if current != self._observed:
            self._set_observed(current)
        if current.holder_identity and self._lease_valid(now) and not self.is_leader():
            log.debug("lock is held by %s and has not yet expired", current.holder_identity)
            return False

        # 4. Take over or renew.
        if self.is_leader():
            desired = replace(desired, acquire_time=current.acquire_time,
                              leader_transitions=current.leader_transitions)
        else:
            desired = replace(desired, leader_transitions=current.leader_transitions + 1)
        try:
            await self._update(desired)
        except Exception as error:  # noqa: BLE001 - a 409 means someone else wrote first
            log.error("Failed to update lock %s: %s", self.describe, error)
            return False
        self._set_observed(desired)
        return True

    async def release(self) -> bool:
        """Give the lease up if we hold it: empty holder, one-second duration."""
        if not self.is_leader():
            return True
        stamp = micro_time(self._wall())
        record = LeaseRecord("", 1, stamp, stamp, self._observed.leader_transitions)
        try:
            try:
                await self._update(record)
            except Exception as error:  # noqa: BLE001
                # A renewal cancelled in flight may have been applied without us seeing
                # its answer, leaving our resourceVersion stale. Unlike client-go (which
                # then leaves the lease to expire), re-read it and release it if it is
                # still ours.
                if status_of(error) != 409:
                    raise
                current = await self._get()
                if current.holder_identity != self.identity:
                    return True
                await self._update(replace(record, leader_transitions=current.leader_transitions))
        except Exception as error:  # noqa: BLE001
            log.error("Failed to release lock %s: %s", self.describe, error)
            return False
        self._set_observed(record)
        return True

    def _maybe_report_transition(self) -> None:
        holder = self._observed.holder_identity
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if self._on_new_leader is not None:
            self._on_new_leader(holder)

    def _lease_event(self, what: str) -> None:
        if self._on_lease_event is not None:
            self._on_lease_event(f"{self.identity} {what}")

    # -- the loops -----------------------------------------------------------------
    async def _acquire(self) -> None:
        """Try until we hold the lease, waiting a jittered retry period between tries."""
        log.info("attempting to acquire leader lease %s...", self.describe)
        while True:
            succeeded = await self.try_acquire_or_renew()
            self._maybe_report_transition()
            if succeeded:
                self._lease_event("became leader")
                log.info("successfully acquired lease %s", self.describe)
                return
            await asyncio.sleep(self.retry_period * (1 + self._rng() * JITTER_FACTOR))

    async def _renew_once(self) -> bool:
        """Retry every retry period until a renewal succeeds; False past renew_deadline."""
        try:
            async with asyncio.timeout(self.renew_deadline):
                while not await self.try_acquire_or_renew():
                    await asyncio.sleep(self.retry_period)
        except TimeoutError:
            return False
        return True

    async def _renew(self) -> None:
        """Renew every retry period; returns when the lease is lost."""
        while True:
            renewed = await self._renew_once()
            self._maybe_report_transition()
            if not renewed:
                log.info("failed to renew lease %s: timed out", self.describe)
                return
            await asyncio.sleep(self.retry_period)

    async def run(self, on_started_leading: Callable[[], Awaitable[None]], on_stopped_leading: Callable[[], None],
                  on_new_leader: Callable[[str], None] | None = None) -> None:
        """Campaign, lead, and stop: returns once the lease is lost (cancel the task to
        stop earlier). ``on_started_leading`` runs as a task while we lead and is
        cancelled, and awaited, before the lease is released; ``on_stopped_leading``
        is always called last, as client-go defers it. An exception escaping
        ``on_started_leading`` ends the term too and is raised from ``run``."""
        self._on_new_leader = on_new_leader
        leading: asyncio.Future[None] | None = None
        held = False
        try:
            await self._acquire()
            held = True
            leading = asyncio.ensure_future(on_started_leading())
            renewing = asyncio.ensure_future(self._renew())
            try:
                await asyncio.wait({leading, renewing}, return_when=asyncio.FIRST_COMPLETED)
                failure = _failure_of(leading)
                if failure is not None:
                    raise failure
                if not renewing.done():  # the leader's work returned: keep the lease, as upstream
                    await renewing
            finally:
                renewing.cancel()
                await asyncio.gather(renewing, return_exceptions=True)
        finally:
            if leading is not None and not leading.done():
                leading.cancel()
                await asyncio.gather(leading, return_exceptions=True)
            if held:
                self._lease_event("stopped leading")
                if self.release_on_cancel:
                    await self.release()
            on_stopped_leading()


def _failure_of(task: asyncio.Future[None]) -> BaseException | None:
    """The exception a finished task raised (None while running, on success or cancel)."""
    if not task.done() or task.cancelled():
        return None
    return task.exception()
