"""``KubeClusterClient``: the scheduler's ``ClusterClient`` over the API server.

* ``bind`` posts the ``pods/binding`` subresource (upstream's DefaultBinder: the pod's
  namespace, name and UID, so a pod deleted and re-created under the same name is
  never bound by mistake). It is called from a binding worker thread and waits there;
  the request itself runs on the event loop.
* ``update_pod_condition`` patches ``pods/status`` with a strategic merge patch of the
  ``PodScheduled`` condition (and ``nominatedNodeName``), as upstream's ``updatePod``;
  like upstream it sends nothing when the pod already carries that condition. Patches
  run in the background, at most one in flight per pod: a newer one for the same pod
  replaces one still waiting, as the API dispatcher of ``SchedulerAsyncAPICalls`` does.
* ``record_event`` hands the event to the broadcaster (``events.k8s.io/v1``, rate
  limited and aggregated there).
* ``preempt_pod`` carries out a preemption off the scheduling cycle, as upstream's
  asynchronous preemption: the victim gets the ``DisruptionTarget`` condition (reason
  ``PreemptionByScheduler``), then is deleted with its UID as a precondition, so a pod
  re-created under the same name is never deleted by mistake; a victim already gone is
  fine. ``clear_nominated_node_name`` empties a lower-priority pod's nomination.
* DynamicResources' claim writes (``bind_resource_claim``, ``create_resource_claim``, ...)
  come from ``claims.ResourceClaimWrites``.
* ``patch_pod_group_conditions`` (``PodGroupStatusWriter``) hands the PodGroupScheduled
  condition to ``pod_group_status.PodGroupStatusPatcher`` (upstream's PatchPodGroupStatus).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Coroutine, Protocol

from ...framework.handle import JSONObject
from ...objects.pod import PodInfo
from ...objects.podgroup import PodGroup, PodGroupCondition
from .concurrency import ConcurrencyLimit
from .claims import ResourceClaimWrites
from .errors import ApiError
from .pod_group_status import PodGroupStatusPatcher
from .pod_meta import pod_generation

__all__ = ["KubeClusterClient", "Requester", "PodEventSink", "scheduled_condition_unchanged"]

log = logging.getLogger("kubesched.client")

# Upstream's event actions: FailedScheduling is reported while "Scheduling", Scheduled while "Binding";
# DynamicResources' PreBind reports BindingConditionsPending while "Scheduling".
_ACTIONS = {"FailedScheduling": "Scheduling", "Scheduled": "Binding", "BindingConditionsPending": "Scheduling"}
_STATUS_WORKERS = 16


class Requester(Protocol):
    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]: ...

    async def write(self, method: str, path: str, *, body: object | bytes | None = None,
                    content_type: str = "application/json", timeout: float | None = None) -> int: ...


class PodEventSink(Protocol):
    """Where pod events go (the events.k8s.io/v1 broadcaster); never blocks."""

    def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None: ...


@dataclass(slots=True)
class _StatusPatch:
    pod: PodInfo
    reason: str
    message: str
    nominated: str | None


def _rfc3339(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def _scheduled_condition(pod: PodInfo) -> dict[str, object] | None:
    """The pod's ``PodScheduled`` condition as last seen (pending pods keep their document)."""
    status = pod.raw.get("status") if pod.raw is not None else None
    conditions = status.get("conditions") if isinstance(status, dict) else None
    for cond in conditions if isinstance(conditions, list) else ():
        if isinstance(cond, dict) and cond.get("type") == "PodScheduled":
            return cond
    return None


def scheduled_condition_unchanged(pod: PodInfo, reason: str, message: str) -> bool:
    """The pod, as last seen, already says ``PodScheduled=False`` for this reason and message
    (upstream's ``podutil.UpdatePodCondition`` returning false): no patch is needed."""
    cond = _scheduled_condition(pod)
    return (cond is not None and cond.get("status") == "False" and cond.get("reason") == reason
            and cond.get("message") == message and (cond.get("observedGeneration") or 0) == pod_generation(pod))


def _nomination_changes(pod: PodInfo, nominated: str | None) -> bool:
    """upstream's ``nnnNeedsUpdate``: a nomination given ("" clears one) that differs from the pod's."""
    return nominated is not None and nominated != pod.nominated_node_name


def _status_patch(pod: PodInfo, reason: str, message: str, nominated: str | None, now: float) -> dict[str, object]:
    condition: dict[str, object] = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                                    "lastProbeTime": None, "lastTransitionTime": _rfc3339(now)}
    generation = pod_generation(pod)
    if generation:  # the pod generation this condition observed (omitted when zero, as upstream's omitempty)
        condition["observedGeneration"] = generation
    old = _scheduled_condition(pod)
    if old is not None and old.get("status") == "False" and old.get("lastTransitionTime"):
        condition["lastTransitionTime"] = old["lastTransitionTime"]  # it moves only when the status does
    status: dict[str, object] = {"conditions": [condition]}
    if _nomination_changes(pod, nominated):
        status["nominatedNodeName"] = nominated or None  # None clears it (preemption found no node)
    return {"status": status}


class KubeClusterClient(ResourceClaimWrites):
    _api: Requester

    def __init__(self, api: Requester, loop: asyncio.AbstractEventLoop, events: PodEventSink, *,
                 bind_timeout: float = 30.0, wall_clock: Callable[[], float] = time.time,
                 concurrency: ConcurrencyLimit | None = None) -> None:
        self._api = api
        self._loop = loop
        self._events = events
        self._bind_timeout = bind_timeout
        self._wall_clock = wall_clock
        self._loop_thread = threading.get_ident() if loop.is_running() else None
        self._waiting: dict[str, _StatusPatch] = {}  # pod uid -> latest patch not yet sent
        self._order: asyncio.Queue[str] | None = None
        self._workers: list[asyncio.Task[None]] = []
        # 16 status patchers, more when the API server is far (the binding tasks' limit, in proportion).
        self.concurrency = concurrency or ConcurrencyLimit()
        self.patches_sent = 0
        self.patches_skipped = 0
        self.victims_deleted = 0
        self._background: set[asyncio.Task[None]] = set()  # preemptions under way
        self._claim_tasks: set[asyncio.Task[None]] = set()  # DynamicResources' writes in the background
        self._claims_stopping = threading.Event()  # ends PreBind's binding-condition waits at shutdown
        self.pod_group_status = PodGroupStatusPatcher(api, loop, wall_clock=wall_clock)
        # (call type, succeeded, seconds) of each background API call: the dispatcher's metrics
        self.on_call: Callable[[str, bool, float], None] | None = None

    # -- lifecycle (on the event loop) -------------------------------------------
    def start(self) -> None:
        self._loop_thread = threading.get_ident()
        self._order = asyncio.Queue()
        self._workers = [self._loop.create_task(self._status_worker())
                         for _ in range(self.concurrency.share(_STATUS_WORKERS))]

    async def stop(self) -> None:
        self.stop_claim_waits()
        await self.close_cycle_writes()
        await self.pod_group_status.close()
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    def _on_loop(self) -> bool:
        return threading.get_ident() == self._loop_thread

    # -- ClusterClient ------------------------------------------------------------
    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Called by a Bind plugin on a binding worker: waits for the API server's answer."""
        if self._on_loop():
            raise RuntimeError("bind must run on a binding worker, not on the event loop")
        future = asyncio.run_coroutine_threadsafe(self.bind_async(pod, node_name), self._loop)
        future.result(self._bind_timeout + 5.0)

    async def bind_async(self, pod: PodInfo, node_name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"namespace": pod.namespace, "name": pod.name, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        started, ok = time.perf_counter(), False
        try:
            # The answer (a Status) is not read: a refusal is an ApiError.
            await self._api.write("POST", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding",
                                  body=body, timeout=self._bind_timeout)
            ok = True
        finally:
            if self.on_call is not None:
                self.on_call("pod_binding", ok, time.perf_counter() - started)

    # -- storage (VolumeBinding's PreBind, on a binding worker) ----------------------------
    def update_storage_object(self, obj: JSONObject) -> None:
        """PUT a PersistentVolume or PersistentVolumeClaim (VolumeBinding's ``bindAPIUpdate``);
        its resourceVersion makes a concurrent change a conflict."""
        if self._on_loop():
            raise RuntimeError("update_storage_object must run on a binding worker, not on the event loop")
        future = asyncio.run_coroutine_threadsafe(self._put_storage_object(obj), self._loop)
        future.result(self._bind_timeout + 5.0)

    async def _put_storage_object(self, obj: JSONObject) -> None:
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
        kind = obj.get("kind")
        if kind == "PersistentVolume" and isinstance(name, str):
            path = f"/api/v1/persistentvolumes/{name}"
        elif kind == "PersistentVolumeClaim" and isinstance(name, str) and isinstance(namespace, str):
            path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
        else:
            raise ValueError(f"not a PersistentVolume or PersistentVolumeClaim: {kind} {name}")
        await self._api.request("PUT", path, body=dict(obj), timeout=self._bind_timeout)

    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None:
        action = _ACTIONS.get(reason, reason)
        if self._on_loop():
            self._events.pod_event(pod, event_type, reason, action, message)
        else:
            self._loop.call_soon_threadsafe(self._events.pod_event, pod, event_type, reason, action, message)

    def update_pod_condition(self, pod: PodInfo, reason: str, message: str, nominated_node_name: str | None) -> None:
        if self._on_loop():
            self._enqueue_status(pod, reason, message, nominated_node_name)
        else:
            self._loop.call_soon_threadsafe(self._enqueue_status, pod, reason, message, nominated_node_name)

    def patch_pod_group_conditions(self, group: PodGroup, conditions: tuple[PodGroupCondition, ...]) -> None:
        """``PodGroupStatusWriter``: the group's new conditions, patched in the background."""
        self.pod_group_status.submit(group, conditions)

    def observe_binding(self, pod: PodInfo, node_name: str) -> None:
        """A binder extender bound the pod: the pod informer will report it."""

    # -- preemption -------------------------------------------------------------------
    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node_name: str,
                    done: Callable[[bool], None] | None = None) -> None:
        """Evict ``victim`` in the background; ``done(ok)`` is called on the event loop after."""
        self._in_background(self._preempt(victim, preemptor.key, preemptor.scheduler_name, "pod", done))

    def preempt_pod_for_group(self, victim: PodInfo, group: PodGroup, scheduler_name: str,
                              done: Callable[[bool], None] | None = None) -> None:
        """``preempt_pod`` for a pod group's preemption (WorkloadAwarePreemption): the condition
        says a "podgroup" is to be accommodated, as upstream's ``podGroupExecutorPreemptor``."""
        self._in_background(self._preempt(victim, group.key, scheduler_name, "podgroup", done))

    def clear_nominated_node_name(self, pod: PodInfo) -> None:
        self._in_background(self._clear_nomination(pod))

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
        def start() -> None:
            task = self._loop.create_task(work)
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        if self._on_loop():
            start()
        else:
            self._loop.call_soon_threadsafe(start)

    async def _preempt(self, victim: PodInfo, preemptor: str, scheduler_name: str, kind: str,
                       done: Callable[[bool], None] | None) -> None:
        ok = False
        path = f"/api/v1/namespaces/{victim.namespace}/pods/{victim.name}"
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                     "message": f"{scheduler_name}: preempting to accommodate a higher priority {kind}",
                     "lastTransitionTime": _rfc3339(self._wall_clock())}
        try:
            await self._api.request("PATCH", f"{path}/status", body={"status": {"conditions": [condition]}},
                                    content_type="application/strategic-merge-patch+json")
            await self._api.request("DELETE", path, body={
                "apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": victim.uid}})
            ok = True
            self.victims_deleted += 1
        except ApiError as err:
            ok = err.is_not_found()  # already gone: the preemption has what it needs
            if not ok:
                log.warning("preempting %s for %s failed: %s", victim.key, preemptor, err.message,
                            extra={"pod": victim.key})
        except Exception as err:  # noqa: BLE001 - a background task must report, not vanish
            log.warning("preempting %s for %s failed: %s", victim.key, preemptor, err, extra={"pod": victim.key})
        if done is not None:
            done(ok)

    async def _clear_nomination(self, pod: PodInfo) -> None:
        try:
            await self._api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status",
                                    body={"status": {"nominatedNodeName": None}},
                                    content_type="application/strategic-merge-patch+json")
        except ApiError as err:
            if not err.is_not_found():
                log.warning("clearing the nominated node of %s failed: %s", pod.key, err.message,
                            extra={"pod": pod.key})
        except Exception as err:  # noqa: BLE001
            log.warning("clearing the nominated node of %s failed: %s", pod.key, err, extra={"pod": pod.key})

    # -- status patches -------------------------------------------------------------
    def _enqueue_status(self, pod: PodInfo, reason: str, message: str, nominated: str | None) -> None:
        if not _nomination_changes(pod, nominated) and scheduled_condition_unchanged(pod, reason, message):
            self.patches_skipped += 1
            return
        queued = pod.uid in self._waiting
        self._waiting[pod.uid] = _StatusPatch(pod, reason, message, nominated)
        if not queued and self._order is not None:
            self._order.put_nowait(pod.uid)

    @property
    def pending_status_patches(self) -> int:
        return len(self._waiting)

    async def _status_worker(self) -> None:
        assert self._order is not None
        limit, me = self.concurrency, asyncio.current_task()
        while True:
            if len(self._workers) > limit.share(_STATUS_WORKERS) and me in self._workers:  # the limit came down
                self._workers.remove(me)
                return
            uid = await self._order.get()
            patch = self._waiting.pop(uid, None)
            if patch is None:
                continue
            pod = patch.pod
            body = _status_patch(pod, patch.reason, patch.message, patch.nominated, self._wall_clock())
            started, ok = time.perf_counter(), False
            try:
                await self._api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status",
                                        body=body, content_type="application/strategic-merge-patch+json")
                self.patches_sent += 1
                ok = True
            except ApiError as err:
                if err.is_not_found():  # the pod is gone: nothing to report on
                    continue
                log.warning("updating the PodScheduled condition of %s failed: %s", pod.key, err.message,
                            extra={"pod": pod.key})
            except Exception as err:  # noqa: BLE001 - a worker must survive any failure
                log.warning("updating the PodScheduled condition of %s failed: %s", pod.key, err,
                            extra={"pod": pod.key})
            finally:
                seconds = time.perf_counter() - started
                if self.on_call is not None:
                    self.on_call("pod_status_patch", ok, seconds)
                limit.answered(seconds, None, started + seconds)
                while len(self._workers) < limit.share(_STATUS_WORKERS) and me in self._workers:  # it went up
                    self._workers.append(self._loop.create_task(self._status_worker()))
