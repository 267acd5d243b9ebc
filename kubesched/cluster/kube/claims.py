"""DynamicResources' writes through the API server: upstream's ``clientset.ResourceV1()`` calls.

What upstream's DynamicResources plugin writes, with the same requests, preconditions and
retries (pkg/scheduler/framework/plugins/dynamicresources):

* ``bind_resource_claim``, PreBind's ``bindClaim``: on a conflict, GET the claim and try
  again (client-go's ``retry.DefaultRetry``: five attempts ~10 ms apart). A claim being
  deleted, or allocated by someone else meanwhile, is an error. A new allocation first
  gets the finalizer ``resource.kubernetes.io/delete-protection`` with a plain PUT of the
  claim, then ``status.allocation`` and the pod in ``status.reservedFor`` with a PUT of
  ``resourceclaims/status``; with device binding conditions on, ``allocationTimestamp``
  is set if the allocation has none.
* ``create_resource_claim``: the claim of a pod's DRA-backed extended resources (POST with
  ``generateName``; name, uid and status cleared as upstream clears them).
* ``patch_pod_extended_resource_claim_status``: ``status.extendedResourceClaimStatus`` by
  a strategic merge patch of ``pods/status``, retried as ``schedutil.PatchPodStatus``
  (``retry.DefaultBackoff`` on conflicts, internal errors, unavailability, refusals).
* ``delete_resource_claim``: upstream's ``deleteClaim``, the finalizer removed by PUT
  (retried on conflict) and then DELETE.
* ``deallocate_resource_claim`` (PostFilter's ``UpdateStatus``): a ``status`` PUT without
  allocation, reservations or device statuses; the claim's ``resourceVersion`` as read, so
  a claim changed meanwhile is a conflict, reported, not retried (as upstream).
* In the background, never waiting (Unreserve runs on the event loop here):
  ``unreserve_resource_claim`` (a strategic merge patch of ``resourceclaims/status``
  deleting the pod's ``reservedFor`` entry, with the claim's uid as precondition) and
  ``delete_resource_claim_in_background``.

The blocking calls made on a binding worker thread (PreBind) wait there while the
requests run on the event loop. PostFilter's two (deallocation, and deleting a stale
extended-resources claim) are made by the scheduling cycle, on the event loop itself:
they run on ``CycleWrites``' side loop and the cycle waits, as upstream's PostFilter
waits for its write. Failures are raised as ``ClaimWriteError`` whose text is upstream's
error text (it becomes the pod's condition message).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Protocol, TypeVar

from ...objects.pod import PodInfo
from .client import ApiClient
from .cycle_writes import CycleWrites
from .errors import ApiError
from .parking_pool import parked

__all__ = [
    "ClaimWriteError",
    "DELETE_PROTECTION_FINALIZER",
    "ResourceClaimWrites",
    "claim_path",
    "retry_on_conflict",
]

log = logging.getLogger("kubesched.claims")

DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer
_GROUP_VERSION = "resource.k8s.io/v1"
_STRATEGIC = "application/strategic-merge-patch+json"
# client-go retry.DefaultRetry and retry.DefaultBackoff: (steps, first delay, factor, jitter).
DEFAULT_RETRY = (5, 0.010, 1.0, 0.1)
DEFAULT_BACKOFF = (4, 0.010, 5.0, 0.1)

_MAX_REQUESTS = 3 * DEFAULT_RETRY[0]
_CHOICES = random.Random()
T = TypeVar("T")
Doc = dict[str, object]


class _Requests(Protocol):
    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]: ...


class ClaimWriteError(Exception):
    """A claim write failed; ``str()`` is upstream's error text, ``cause`` the API's answer."""

    def __init__(self, message: str, cause: ApiError | None = None) -> None:
        super().__init__(message)
        self.cause = cause

    def is_conflict(self) -> bool:
        return self.cause is not None and self.cause.is_conflict()


def claim_path(namespace: str, name: str | None = None, subresource: str | None = None) -> str:
    path = f"/apis/{_GROUP_VERSION}/namespaces/{namespace}/resourceclaims"
    if name is not None:
        path += f"/{name}"
        if subresource is not None:
            path += f"/{subresource}"
    return path


def _meta(doc: Mapping[str, object]) -> Mapping[str, object]:
    found = doc.get("metadata")
    return found if isinstance(found, Mapping) else {}


def _key(doc: Mapping[str, object]) -> tuple[str, str]:
    meta = _meta(doc)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _kobj(doc: Mapping[str, object]) -> str:
    """klog.KObj's rendering: ``namespace/name``."""
    namespace, name = _key(doc)
    return f"{namespace}/{name}" if namespace else name


def _copy(doc: Mapping[str, object]) -> Doc:
    copied = copy.deepcopy(dict(doc))
    copied.setdefault("apiVersion", _GROUP_VERSION)
    copied.setdefault("kind", "ResourceClaim")
    return copied


def _dict(parent: Doc, key: str) -> Doc:
    found = parent.get(key)
    if not isinstance(found, dict):
        found = {}
        parent[key] = found
    return found


def _rfc3339(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


async def _backoff(steps: tuple[int, float, float, float], retriable: Callable[[ApiError], bool],
                   attempt: Callable[[], Awaitable[T]]) -> T:
    """client-go ``retry.OnError``: up to ``steps`` attempts while the failure is retriable;
    the last failure is raised as it came."""
    count, delay, factor, jitter = steps
    for step in range(count):
        try:
            return await attempt()
        except ClaimWriteError as err:
            if step == count - 1 or err.cause is None or not retriable(err.cause):
                raise
        except ApiError as err:
            if step == count - 1 or not retriable(err):
                raise
        await asyncio.sleep(delay * (1.0 + jitter * random.random()))
        delay *= factor
    raise AssertionError("unreachable")  # pragma: no cover


async def retry_on_conflict(attempt: Callable[[], Awaitable[T]]) -> T:
    """client-go ``retry.RetryOnConflict(retry.DefaultRetry, ...)``."""
    return await _backoff(DEFAULT_RETRY, ApiError.is_conflict, attempt)


def _pod_status_retriable(err: ApiError) -> bool:
    """schedutil.Retriable: internal errors, unavailability, conflicts, refused connections."""
    return (err.is_internal_error() or err.reason == "ServiceUnavailable" or err.status == 503
            or err.is_conflict() or err.is_connection_refused())


class ResourceClaimWrites:
    """Mixed into ``KubeClusterClient``: the calls DynamicResources makes in ``run``."""

    _api: _Requests
    _loop: asyncio.AbstractEventLoop
    _loop_thread: int | None
    _bind_timeout: float
    _wall_clock: Callable[[], float]
    _claim_tasks: set[asyncio.Task[None]]
    _claims_stopping: threading.Event
    _cycle_writes: CycleWrites | None = None
    # Metric hooks (claim_metrics.ClaimMetrics in run): a claim created, a binding-condition wait.
    on_claim_created: Callable[[bool], None] | None = None
    on_binding_conditions: Callable[[str, str, float, list[str], list[str]], None] | None = None

    # -- plumbing -------------------------------------------------------------------------
    def _wait_for(self, what: str, work: Coroutine[object, object, T]) -> T:
        """Run ``work`` on the event loop and wait for it on this (binding worker) thread."""
        if threading.get_ident() == self._loop_thread:
            work.close()
            raise RuntimeError(f"{what} must run on a binding worker, not on the event loop")
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        # Bounded (a loop that stopped never answers), above the longest the work can take:
        # five conflict retries of a GET and two PUTs, each within the request timeout.
        return future.result(self._bind_timeout * _MAX_REQUESTS + 5.0)

    def _claims_in_background(self, what: str, work: Coroutine[object, object, object]) -> None:
        async def logged() -> None:
            try:
                await work
            except (ApiError, ClaimWriteError) as err:
                log.warning("%s failed: %s", what, err)
            except Exception as err:  # noqa: BLE001 - a background task must report, not vanish
                log.warning("%s failed: %s", what, err)

        def done(task: asyncio.Task[None]) -> None:
            self._claim_tasks.discard(task)
            work.close()  # a write the stop cancelled before it began is dropped, not left unawaited

        def start() -> None:
            task = self._loop.create_task(logged())
            self._claim_tasks.add(task)
            task.add_done_callback(done)

        if threading.get_ident() == self._loop_thread:
            start()
        else:
            try:
                self._loop.call_soon_threadsafe(start)
            except RuntimeError:  # the loop is closed: kubesched is stopping
                work.close()
                log.warning("%s dropped: the scheduler is stopping", what)

    def _wait_in_cycle(self, what: str, work: Callable[[_Requests], Coroutine[object, object, T]]) -> T:
        """``work(api)`` waited for from wherever the caller is: from a binding worker as
        ``_wait_for``; from the scheduling cycle (the event loop) on the side loop."""
        if threading.get_ident() != self._loop_thread:
            return self._wait_for(what, work(self._api))
        if self._cycle_writes is None:
            api = self._api
            if not isinstance(api, ApiClient):
                raise RuntimeError(f"{what} from the scheduling cycle needs an ApiClient to copy")

            def make() -> ApiClient:
                side = ApiClient(api.conn, timeout=api.timeout)
                side.observer = api.observer  # the main loop waits meanwhile: the metrics are not shared at once
                return side

            self._cycle_writes = CycleWrites(make)
        return self._cycle_writes.run(work, self._bind_timeout * _MAX_REQUESTS + 5.0)

    async def close_cycle_writes(self) -> None:
        if self._cycle_writes is not None:
            await self._cycle_writes.close()
            self._cycle_writes = None

    async def drain_claim_writes(self) -> None:
        """Wait for the background claim writes under way (tests, shutdown)."""
        tasks = list(self._claim_tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- single requests ----------------------------------------------------------------
    async def _get(self, namespace: str, name: str, api: _Requests | None = None) -> Doc:
        return await (api or self._api).request("GET", claim_path(namespace, name), timeout=self._bind_timeout)

    async def _put(self, claim: Doc, subresource: str | None = None, api: _Requests | None = None) -> Doc:
        namespace, name = _key(claim)
        return await (api or self._api).request("PUT", claim_path(namespace, name, subresource), body=claim,
                                                timeout=self._bind_timeout)

    def random_choices(self) -> random.Random:
        """Where upstream chooses at random, so does run (PostFilter's pick among a pod's
        unavailable claims, which upstream takes from a map's iteration order)."""
        return _CHOICES

    def binding_conditions_reported(self) -> bool:
        """DRA drivers report devices' binding conditions in this cluster: PreBind waits for them."""
        return True

    def wait_while_running(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` on a binding worker; False at once when the client stops (the
        process is exiting: a binding-condition wait must not hold it up to its timeout)."""
        with parked():  # a binding worker that waits does not count toward the pool's bound
            return not self._claims_stopping.wait(seconds)

    def stop_claim_waits(self) -> None:
        self._claims_stopping.set()

    def observe_binding_conditions(self, profile: str, status: str, seconds: float, waited: list[str],
                                   counted: list[str]) -> None:
        """A binding-condition wait ended (``success``, ``failure``, ``timeout``, ``error``):
        ``waited`` the driver of each allocated device, ``counted`` of each with binding conditions."""
        if self.on_binding_conditions is not None:
            self.on_binding_conditions(profile, status, seconds, waited, counted)

    def get_resource_claim(self, namespace: str, name: str) -> Doc:
        """GET the claim (raises ``ApiError``)."""
        return self._wait_for("get_resource_claim", self._get(namespace, name))

    # -- PreBind: bindClaim --------------------------------------------------------------
    def bind_resource_claim(self, claim: Mapping[str, object], allocation: Mapping[str, object] | None,
                            consumer: Mapping[str, object], *, set_allocation_timestamp: bool = True) -> Doc:
        """Record ``allocation`` (None: the claim is allocated already) and reserve the claim for
        ``consumer`` (``{"resource": "pods", "name": ..., "uid": ...}``); the claim as stored."""
        return self._wait_for("bind_resource_claim",
                              self.bind_resource_claim_async(claim, allocation, consumer, set_allocation_timestamp))

    async def bind_resource_claim_async(self, claim: Mapping[str, object], allocation: Mapping[str, object] | None,
                                        consumer: Mapping[str, object], set_allocation_timestamp: bool = True) -> Doc:
        current = _copy(claim)
        refresh = False
        namespace, name = _key(current)

        async def attempt() -> Doc:
            nonlocal current, refresh
            if refresh:
                try:
                    current = await self._get(namespace, name)
                except ApiError as err:
                    raise ClaimWriteError(f"get updated claim {_kobj(current)} after conflict: {err.message}",
                                          err) from None
            refresh = True  # every later attempt starts from the stored claim
            if _meta(current).get("deletionTimestamp"):
                raise ClaimWriteError(f"claim {_kobj(current)} got deleted in the meantime")
            status = _dict(current, "status")
            if allocation is not None:
                if status.get("allocation"):
                    raise ClaimWriteError(f"claim {_kobj(current)} got allocated elsewhere in the meantime")
                meta = _dict(current, "metadata")
                finalizers = meta.get("finalizers")
                names = list(finalizers) if isinstance(finalizers, list) else []
                if DELETE_PROTECTION_FINALIZER not in names:
                    meta["finalizers"] = [*names, DELETE_PROTECTION_FINALIZER]
                    try:
                        current = await self._put(current)
                    except ApiError as err:
                        raise ClaimWriteError(f"add finalizer to claim {_kobj(current)}: {err.message}", err) from None
                    status = _dict(current, "status")
                status["allocation"] = copy.deepcopy(dict(allocation))
            reserved = status.get("reservedFor")
            status["reservedFor"] = [*(reserved if isinstance(reserved, list) else []), dict(consumer)]
            if set_allocation_timestamp:
                allocated = status.get("allocation")
                if not isinstance(allocated, dict):
                    raise ClaimWriteError(f"claim {_kobj(current)} got deallocated elsewhere in the meantime")
                if not allocated.get("allocationTimestamp"):
                    allocated["allocationTimestamp"] = _rfc3339(self._wall_clock())
            try:
                return await self._put(current, "status")
            except ApiError as err:
                what = "add allocation and reservation to claim" if allocation is not None else \
                    "add reservation to claim"
                raise ClaimWriteError(f"{what} {_kobj(current)}: {err.message}", err) from None

        return await retry_on_conflict(attempt)

    # -- PreBind: DRA-backed extended resources -------------------------------------------
    def create_resource_claim(self, claim: Mapping[str, object]) -> Doc:
        """POST the claim of a pod's DRA-backed extended resources (``generateName``); as created."""
        return self._wait_for("create_resource_claim", self.create_resource_claim_async(claim))

    async def create_resource_claim_async(self, claim: Mapping[str, object]) -> Doc:
        body = _copy(claim)
        body.pop("status", None)  # Status.Allocation = nil; the server drops the rest anyway
        meta = _dict(body, "metadata")
        meta.pop("name", None)
        meta.pop("uid", None)
        namespace = str(meta.get("namespace") or "")
        try:
            created = await self._api.request("POST", claim_path(namespace), body=body, timeout=self._bind_timeout)
        except ApiError as err:
            self._claim_created(False)
            raise ClaimWriteError(f"create claim for extended resources {namespace}/: {err.message}", err) from None
        self._claim_created(True)
        return created

    def _claim_created(self, ok: bool) -> None:
        if self.on_claim_created is not None:
            self.on_claim_created(ok)

    def patch_pod_extended_resource_claim_status(self, pod: PodInfo, status: Mapping[str, object]) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus`` (``requestMappings``, ``resourceClaimName``)."""
        self._wait_for("patch_pod_extended_resource_claim_status",
                       self.patch_pod_extended_resource_claim_status_async(pod, status))

    async def patch_pod_extended_resource_claim_status_async(self, pod: PodInfo, status: Mapping[str, object]) -> None:
        body = {"status": {"extendedResourceClaimStatus": copy.deepcopy(dict(status))}}
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"

        async def attempt() -> Doc:
            return await self._api.request("PATCH", path, body=body, content_type=_STRATEGIC,
                                           timeout=self._bind_timeout)

        try:
            await _backoff(DEFAULT_BACKOFF, _pod_status_retriable, attempt)
        except ApiError as err:
            raise ClaimWriteError(f"update pod {pod.namespace}/{pod.name} ExtendedResourceClaimStatus: "
                                  f"{err.message}", err) from None

    # -- Unreserve and PostFilter: deleteClaim ----------------------------------------------
    def delete_resource_claim(self, claim: Mapping[str, object]) -> None:
        """Upstream's ``deleteClaim``: drop the delete-protection finalizer, then DELETE."""
        self._wait_in_cycle("delete_resource_claim", lambda api: self.delete_resource_claim_async(claim, api))

    def delete_resource_claim_in_background(self, claim: Mapping[str, object]) -> None:
        self._claims_in_background(f"deleting resourceclaim {_kobj(claim)}", self.delete_resource_claim_async(claim))

    async def delete_resource_claim_async(self, claim: Mapping[str, object], api: _Requests | None = None) -> None:
        api = api or self._api
        current = _copy(claim)
        namespace, name = _key(current)
        refresh = False

        async def attempt() -> Doc:
            nonlocal current, refresh
            if refresh:
                try:
                    current = await self._get(namespace, name, api)
                except ApiError as err:
                    raise ClaimWriteError(f"get resourceclaim {namespace}/{name}: {err.message}", err) from None
            refresh = True
            meta = _dict(current, "metadata")
            finalizers = meta.get("finalizers")
            if isinstance(finalizers, list) and DELETE_PROTECTION_FINALIZER in finalizers:
                kept = list(finalizers)
                kept.remove(DELETE_PROTECTION_FINALIZER)
                meta["finalizers"] = kept
            try:
                return await self._put(current, api=api)
            except ApiError as err:
                raise ClaimWriteError(f"update resourceclaim {namespace}/{name}: {err.message}", err) from None

        await retry_on_conflict(attempt)
        try:
            await api.request("DELETE", claim_path(namespace, name), timeout=self._bind_timeout)
        except ApiError as err:
            raise ClaimWriteError(err.message, err) from None

    # -- Unreserve: the pod out of reservedFor ------------------------------------------------
    def unreserve_resource_claim(self, claim: Mapping[str, object], pod_uid: str) -> None:
        """Remove ``pod_uid`` from the claim's ``reservedFor`` (in the background; failures are
        logged, as upstream logs them: the pod's next attempt gets here again)."""
        self._claims_in_background(f"unreserve resourceclaim {_kobj(claim)}",
                                   self.unreserve_resource_claim_async(claim, pod_uid))

    async def unreserve_resource_claim_async(self, claim: Mapping[str, object], pod_uid: str) -> None:
        namespace, name = _key(claim)
        patch = {"metadata": {"uid": _meta(claim).get("uid")},
                 "status": {"reservedFor": [{"$patch": "delete", "uid": pod_uid}]}}
        await self._api.request("PATCH", claim_path(namespace, name, "status"), body=patch, content_type=_STRATEGIC,
                                timeout=self._bind_timeout)

    # -- PostFilter: deallocation ---------------------------------------------------------
    def deallocate_resource_claim(self, claim: Mapping[str, object]) -> None:
        """Clear the claim's allocation, reservations and device statuses; waits for the answer
        (``ClaimWriteError`` with the API's message when refused)."""
        self._wait_in_cycle("deallocate_resource_claim", lambda api: self.deallocate_resource_claim_async(claim, api))

    async def deallocate_resource_claim_async(self, claim: Mapping[str, object], api: _Requests | None = None) -> Doc:
        body = _copy(claim)
        status = _dict(body, "status")
        for field in ("reservedFor", "allocation", "devices"):
            status.pop(field, None)
        try:
            return await self._put(body, "status", api)
        except ApiError as err:  # client-go's StatusError reads as the Status's message
            raise ClaimWriteError(err.message, err) from None
