"""The ``PodGroupScheduled`` condition written through the API server (``PodGroupStatusWriter``).

Upstream's ``updatePodGroupCondition`` ends in ``util.PatchPodGroupStatus``: the status the
PodGroup lister holds and that status with the condition set are marshalled, and
``strategicpatch.CreateTwoWayMergePatch`` turns the two into a strategic merge patch
(``conditions`` is a list map keyed by ``type``: changed fields of a known condition with
its ``type``, a new condition whole, a removed one as ``$patch: delete``, and
``$setElementOrder/conditions`` whenever the list changed). An empty patch is not sent;
otherwise it goes to ``PATCH /apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups/
{name}/status`` as ``application/strategic-merge-patch+json``, retried with client-go's
``retry.DefaultBackoff`` (4 attempts, 10 ms growing fivefold, 10% jitter) while the error is
``schedutil.Retriable`` (an internal error, unavailability, a conflict, a refused
connection). A failure is logged (``Failed to update PodGroup status``) and never reaches
the scheduling cycle.

One difference, for the same reason pod status patches differ: upstream's scheduling
goroutine waits for the write, but kubesched's cycle runs on the event loop, which must
never wait on the API server. So the write runs in the background, and:

* one group's writes go out in the order the scheduler asked for them, one at a time;
* a write asked while the previous one of the same group has not started replaces it: both
  were computed from the scheduler's view of the group, the newer from the same or a newer
  one, and the API server ends in the state the newer asks for (coalescing, as the pod
  status patches do);
* ``lastTransitionTime``, which the scheduler leaves None on a new or changed condition, is
  stamped with the wall clock of the moment the scheduler asked (upstream's
  ``SetStatusCondition`` stamps ``metav1.Now()`` in the cycle), at second precision as
  ``metav1.Time`` is written;
* the scheduler decides from the PodGroup its informer last reported. A retry of the group
  can come before the informer has reported the previous write (here sooner than upstream,
  whose write is done before its cycle ends); then the write is made against what was last
  written for that version of the group, as upstream's would be against a fresh lister: a
  condition whose status the last write already set keeps that write's transition time, and
  a write that changes nothing of it is not sent.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ...objects.podgroup import PodGroup, PodGroupCondition
from .errors import ApiError

__all__ = ["POD_GROUP_API", "PodGroupStatusPatcher", "condition_json", "conditions_patch", "pod_group_status_path",
           "register_pod_group_status_metrics"]

log = logging.getLogger("kubesched.client")

POD_GROUP_API = "scheduling.k8s.io/v1alpha2"
_STRATEGIC = "application/strategic-merge-patch+json"
# client-go retry.DefaultBackoff: steps, first delay, factor, jitter.
_DEFAULT_BACKOFF = (4, 0.010, 5.0, 0.1)
_MAX_IN_FLIGHT = 16
_REMEMBERED = 10_000  # groups whose last write is remembered
JSONDict = dict[str, object]


class _Requests(Protocol):
    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]: ...


def pod_group_status_path(namespace: str, name: str) -> str:
    return f"/apis/{POD_GROUP_API}/namespaces/{namespace}/podgroups/{name}/status"


def _rfc3339(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def condition_json(cond: PodGroupCondition) -> JSONDict:
    """A ``metav1.Condition`` as Go marshals it: ``observedGeneration`` left out when 0, a
    zero ``lastTransitionTime`` as null."""
    out: JSONDict = {"type": cond.type, "status": cond.status}
    if cond.observed_generation:
        out["observedGeneration"] = cond.observed_generation
    out["lastTransitionTime"] = cond.last_transition_time
    out["reason"] = cond.reason
    out["message"] = cond.message
    return out


def _diff_maps(old: Mapping[str, object], new: Mapping[str, object]) -> JSONDict:
    """Two flat maps' strategic patch: changed and added keys with their new values, removed ones null."""
    patch: JSONDict = {key: value for key, value in new.items() if key not in old or old[key] != value}
    patch.update({key: None for key in old if key not in new})
    return patch


def conditions_patch(old: Sequence[PodGroupCondition], new: Sequence[PodGroupCondition]) -> JSONDict | None:
    """``CreateTwoWayMergePatch`` of a PodGroup whose ``status.conditions`` go from ``old`` to
    ``new`` (nothing else changes), or None where it makes ``{}``."""
    before = [condition_json(c) for c in old]
    after = [condition_json(c) for c in new]
    status: JSONDict = {}
    if not before and after:  # a field the old object omitted is added whole
        status["conditions"] = after
    elif before and not after:
        status["conditions"] = None
    elif before:
        known = {str(c["type"]): c for c in before}
        kept = {str(c["type"]) for c in after}
        items: list[object] = []
        for cond in after:  # in the new list's order (normalizeSliceOrder)
            was = known.get(str(cond["type"]))
            if was is None:
                items.append(cond)
                continue
            changed = _diff_maps(was, cond)
            if changed:
                changed["type"] = cond["type"]
                items.append(changed)
        items.extend({"$patch": "delete", "type": t} for t in sorted(known) if t not in kept)
        same_order = [c["type"] for c in before] == [c["type"] for c in after]
        if items:
            status["conditions"] = items
        if items or not same_order:
            status["$setElementOrder/conditions"] = [{"type": c["type"]} for c in after]
    return {"status": status} if status else None


def _retriable(err: ApiError) -> bool:
    """schedutil.Retriable: internal errors, unavailability, conflicts, refused connections."""
    return (err.is_internal_error() or err.reason == "ServiceUnavailable" or err.status == 503
            or err.is_conflict() or err.is_connection_refused())


@dataclass(slots=True)
class _Write:
    group: PodGroup
    conditions: tuple[PodGroupCondition, ...]  # as the scheduler decided them
    asked_at: str  # the wall clock when asked, RFC 3339


def _stamped(conditions: tuple[PodGroupCondition, ...], base: Sequence[PodGroupCondition],
             now: str) -> tuple[PodGroupCondition, ...]:
    """``SetStatusCondition``'s transition times against ``base``: kept where the status is the
    same, ``now`` where it is new or changed (the scheduler left those None)."""
    out: list[PodGroupCondition] = []
    for cond in conditions:
        if cond.last_transition_time is None:
            was = next((b for b in base if b.type == cond.type), None)
            kept = was.last_transition_time if was is not None and was.status == cond.status else None
            cond = replace(cond, last_transition_time=kept or now)
        out.append(cond)
    return tuple(out)


class PodGroupStatusPatcher:
    """Background writes of PodGroup conditions: ordered and coalesced per group, retried as
    upstream retries them, logged and counted when they fail."""

    def __init__(self, api: _Requests, loop: asyncio.AbstractEventLoop, *,
                 wall_clock: Callable[[], float] = time.time, timeout: float = 30.0,
                 backoff: tuple[int, float, float, float] = _DEFAULT_BACKOFF,
                 max_in_flight: int = _MAX_IN_FLIGHT) -> None:
        self._api = api
        self._loop = loop
        self._wall_clock = wall_clock
        self._timeout = timeout
        self._backoff = backoff
        self._slots = asyncio.Semaphore(max_in_flight)
        self._waiting: dict[str, _Write] = {}  # group key -> the latest write not yet started
        # group key -> (the group's resourceVersion a write was made against, what it wrote)
        self._written: OrderedDict[str, tuple[str, tuple[PodGroupCondition, ...]]] = OrderedDict()
        self._tasks: dict[str, asyncio.Task[None]] = {}  # group key -> its writer, while it has work
        self._loop_thread: int | None = None
        self.sent = 0
        self.failed = 0
        self.unchanged = 0  # empty patches, not sent
        self.coalesced = 0  # writes replaced by a newer one before they started

    # -- the scheduler's side ----------------------------------------------------------------
    def submit(self, group: PodGroup, conditions: tuple[PodGroupCondition, ...]) -> None:
        """Write ``conditions`` as ``group``'s status conditions; returns at once."""
        write = _Write(group, conditions, _rfc3339(self._wall_clock()))
        if self._on_loop():
            self._enqueue(write)
        else:
            self._loop.call_soon_threadsafe(self._enqueue, write)

    def _on_loop(self) -> bool:
        if self._loop_thread is None and self._loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                return False
            if running is self._loop:
                self._loop_thread = threading.get_ident()
        return threading.get_ident() == self._loop_thread

    def _enqueue(self, write: _Write) -> None:
        key = write.group.key
        if key in self._waiting:
            self.coalesced += 1
        self._waiting[key] = write
        if key not in self._tasks:
            self._tasks[key] = self._loop.create_task(self._drain(key), name=f"podgroup-status-{key}")

    @property
    def pending(self) -> int:
        """Writes asked for and not finished (waiting or under way)."""
        return len(self._waiting.keys() | self._tasks.keys())

    # -- the writers ----------------------------------------------------------------------------
    async def _drain(self, key: str) -> None:
        try:
            while key in self._waiting:
                async with self._slots:
                    write = self._waiting.pop(key, None)
                    if write is None:
                        break
                    await self._send(write)
        finally:
            self._tasks.pop(key, None)

    def _base(self, group: PodGroup) -> tuple[PodGroupCondition, ...]:
        """The group's conditions as the API server has them, as far as is known: what was last
        written, while the informer has reported no newer version of the group."""
        written = self._written.get(group.key)
        if written is not None and written[0] == group.resource_version:
            return written[1]
        return group.conditions

    async def _send(self, write: _Write) -> None:
        group = write.group
        base = self._base(group)
        conditions = _stamped(write.conditions, base, write.asked_at)
        body = conditions_patch(base, conditions)
        if body is None:
            self.unchanged += 1
            return
        path = pod_group_status_path(group.namespace, group.name)
        try:
            await self._with_backoff(lambda: self._api.request("PATCH", path, body=body, content_type=_STRATEGIC,
                                                               timeout=self._timeout))
            self.sent += 1
            self._written[group.key] = (group.resource_version, conditions)
            self._written.move_to_end(group.key)
            while len(self._written) > _REMEMBERED:
                self._written.popitem(last=False)
            return
        except ApiError as err:
            reason = err.message
        except Exception as err:  # noqa: BLE001 - a background write reports, it never vanishes
            reason = str(err) or type(err).__name__
        self.failed += 1
        log.warning("Failed to update PodGroup status: %s", reason, extra={"podGroup": group.key})

    async def _with_backoff(self, attempt: Callable[[], Awaitable[object]]) -> None:
        """client-go ``retry.OnError``: up to ``steps`` attempts while the failure is retriable."""
        steps, delay, factor, jitter = self._backoff
        for step in range(steps):
            try:
                await attempt()
                return
            except ApiError as err:
                if step == steps - 1 or not _retriable(err):
                    raise
            await asyncio.sleep(delay * (1.0 + jitter * random.random()))
            delay *= factor

    async def close(self, grace: float = 2.0) -> None:
        """Give the writes under way ``grace`` seconds to finish, then cancel what is left."""
        tasks = list(self._tasks.values())
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        left = [t for t in self._tasks.values() if not t.done()]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        if self._waiting:
            log.warning("PodGroup status writes left unwritten at exit: %d", len(self._waiting))
        self._waiting.clear()


class _PatcherCollector(Collector):
    def __init__(self, patcher: PodGroupStatusPatcher) -> None:
        self._patcher = patcher

    def describe(self) -> Iterable[Metric]:
        return self.collect()

    def collect(self) -> Iterable[Metric]:
        p = self._patcher
        writes = CounterMetricFamily("kubesched_pod_group_status_patches", "PodGroupScheduled condition writes "
                                     "by result: sent (accepted), failed (refused or out of retries), unchanged "
                                     "(nothing to patch), coalesced (replaced by a newer one before sending).",
                                     labels=("result",))
        for result, value in (("sent", p.sent), ("failed", p.failed), ("unchanged", p.unchanged),
                              ("coalesced", p.coalesced)):
            writes.add_metric((result,), value)
        pending = GaugeMetricFamily("kubesched_pod_group_status_patches_pending", "PodGroupScheduled condition "
                                    "writes waiting or under way.", value=p.pending)
        return [writes, pending]


def register_pod_group_status_metrics(registry: CollectorRegistry, patcher: PodGroupStatusPatcher) -> None:
    """kubesched's own metrics of the condition writes (upstream writes them synchronously and
    exports none; its failures show in ``rest_client_requests_total`` and the log)."""
    registry.register(_PatcherCollector(patcher))
