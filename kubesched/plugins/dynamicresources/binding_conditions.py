"""PreBind's wait for device binding conditions (DRADeviceBindingConditions, beta and on in v1.36).

A device whose ResourceSlice entry lists ``bindingConditions`` (say, a device a driver must
first attach to the node) is allocated like any other, but the pod may only be bound once
the driver reports every one of those conditions ``True`` in the claim's ``status.devices``.
Upstream's PreBind, after writing the claims, records a ``BindingConditionsPending`` event
and polls its claim cache every 5 seconds (the first check at once) for up to the plugin's
``bindingTimeout`` (600 s by default):

* ``claim_ready`` (``isClaimReadyForBinding``): every result with binding conditions has a
  device status whose conditions are all ``True``; a ``bindingFailureConditions`` entry that
  is ``True`` fails at once (``device binding failed: claim=..., reason=..., message=...``);
* ``claim_timed_out`` (``isClaimTimeout``): a claim not ready whose ``allocationTimestamp`` is
  older than the binding timeout fails (``device binding timeout: claim=...``);
* the poll itself ending fails with ``device binding timeout: context deadline exceeded``.

The claim documents are read through ``lookup`` (the informer-fed claim store in ``run``), as
upstream reads its assume cache: the driver's status updates arrive there. The wait runs on a
binding worker in ``run``; the scheduling loop goes on meanwhile.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from typing import Protocol, runtime_checkable

from ...framework import Handle, Status
from ...framework.features import Features
from ...framework.handle import JSONObject
from ...objects.dra import ResourceClaim
from ...objects.pod import PodInfo
from .manager import DraManager
from .names import DEFAULT_BINDING_TIMEOUT_SECONDS

__all__ = [
    "BindingConditionError",
    "BindingConditionsReported",
    "DEFAULT_BINDING_TIMEOUT",
    "POLL_INTERVAL",
    "claim_ready",
    "claim_timed_out",
    "has_binding_conditions",
    "pre_bind_wait",
    "timestamp_clock",
    "wait_for_binding_conditions",
]

POLL_INTERVAL = 5.0  # upstream's wait.PollUntilContextTimeout period
DEFAULT_BINDING_TIMEOUT = DEFAULT_BINDING_TIMEOUT_SECONDS  # config.DynamicResourcesBindingTimeoutDefault
DEVICE_BINDING_TIMEOUT = "device binding timeout"  # ErrDeviceBindingTimeout
DEVICE_BINDING_FAILED = "device binding failed"  # ErrDeviceBindingFailed
CONTEXT_CANCELED = "context canceled"  # the scheduler stopping during the wait

Lookup = Callable[[ResourceClaim], "JSONObject | None"]


class BindingConditionError(Exception):
    """A device's binding failed or timed out; ``str`` is upstream's error text."""


def has_binding_conditions(claims: Sequence[ResourceClaim]) -> bool:
    """``hasBindingConditions``: some allocated device of the pod's claims has binding conditions."""
    return any(claim.allocation is not None and any(result.binding_conditions for result in claim.allocation.devices)
               for claim in claims)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _results(doc: Mapping[str, object]) -> list[Mapping[str, object]]:
    allocation = _mapping(_mapping(doc.get("status")).get("allocation"))
    return [_mapping(r) for r in _list(_mapping(allocation.get("devices")).get("results"))]


def _device_status(doc: Mapping[str, object], result: Mapping[str, object]) -> Mapping[str, object] | None:
    """``getAllocatedDeviceStatus``: the status entry of the result's device (driver, pool, device)."""
    for entry in _list(_mapping(doc.get("status")).get("devices")):
        status = _mapping(entry)
        if (status.get("device"), status.get("driver"), status.get("pool")) == (
                result.get("device"), result.get("driver"), result.get("pool")):
            return status
    return None


def _condition(status: Mapping[str, object], kind: object) -> Mapping[str, object] | None:
    for entry in _list(status.get("conditions")):
        condition = _mapping(entry)
        if condition.get("type") == kind:
            return condition
    return None


def _name(doc: Mapping[str, object]) -> str:
    return str(_mapping(doc.get("metadata")).get("name") or "")


def claim_ready(doc: Mapping[str, object]) -> bool:
    """``isClaimReadyForBinding``: every binding condition met; ``BindingConditionError`` when a
    binding failure condition is ``True``."""
    if not _mapping(doc.get("status")).get("allocation"):
        return False
    for result in _results(doc):
        conditions = _list(result.get("bindingConditions"))
        if not conditions:
            continue
        status = _device_status(doc, result)
        if status is None:
            return False
        for kind in _list(result.get("bindingFailureConditions")):
            failed = _condition(status, kind)
            if failed is not None and failed.get("status") == "True":
                raise BindingConditionError(
                    f"{DEVICE_BINDING_FAILED}: claim={_name(doc)}, reason={failed.get('reason') or ''}, "
                    f"message={json.dumps(str(failed.get('message') or ''))}")
        for kind in conditions:
            met = _condition(status, kind)
            if met is None or met.get("status") != "True":
                return False
    return True


def _timestamp(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def claim_timed_out(doc: Mapping[str, object], timeout: float, now: float) -> bool:
    """``isClaimTimeout``: a result with binding conditions, allocated longer than ``timeout`` ago."""
    allocated = _timestamp(_mapping(_mapping(doc.get("status")).get("allocation")).get("allocationTimestamp"))
    if allocated is None:
        return False
    return any(result.get("bindingConditions") is not None and allocated + timeout < now for result in _results(doc))


def _pod_ready(claims: Sequence[ResourceClaim], lookup: Lookup, timeout: float, now: float) -> bool:
    """``isPodReadyForBinding`` over the pod's claims as the cache holds them now."""
    for claim in claims:
        doc = lookup(claim)
        if doc is None:
            raise BindingConditionError(f'could not find ResourceClaim "{claim.namespace}/{claim.name}"')
        if not claim_ready(doc):
            if claim_timed_out(doc, timeout, now):
                raise BindingConditionError(f"{DEVICE_BINDING_TIMEOUT}: claim={claim.name}")
            return False
    return True


def wait_for_binding_conditions(claims: Sequence[ResourceClaim], lookup: Lookup, timeout: float, *,
                                sleep: Callable[[float], None] = time.sleep,
                                clock: Callable[[], float] = time.monotonic,
                                wall_clock: Callable[[], float] = time.time) -> None:
    """Poll until every claim is ready (at once, then every ``POLL_INTERVAL``) for ``timeout``
    seconds; ``BindingConditionError`` on a failure condition or when the time is up."""
    deadline = clock() + timeout
    while True:
        if _pod_ready(claims, lookup, timeout, wall_clock()):
            return
        left = deadline - clock()
        if left <= 0:
            raise BindingConditionError(f"{DEVICE_BINDING_TIMEOUT}: context deadline exceeded")
        sleep(min(POLL_INTERVAL, left))
        if clock() >= deadline:
            raise BindingConditionError(f"{DEVICE_BINDING_TIMEOUT}: context deadline exceeded")


def _latest(manager: DraManager, claim: ResourceClaim) -> JSONObject | None:
    """The claim as the informer last delivered it (the driver's reports land there). A claim
    PreBind just created may not have arrived yet: known to the manager, it is not ready."""
    raw = manager.raw_claim(claim)
    if raw is None and manager.get_claim(claim.namespace, claim.name) is not None:
        return {"metadata": {"name": claim.name, "namespace": claim.namespace}, "status": {}}
    return raw


@runtime_checkable
class BindingConditionsReported(Protocol):
    """A cluster client whose DRA drivers report binding conditions (``run``'s). The simulated
    cluster has no drivers: there PreBind does not wait (docs/dra.md, "Not modelled")."""

    def binding_conditions_reported(self) -> bool: ...

    def wait_while_running(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; False when the client is stopping (upstream's context canceled)."""
        ...

    def observe_binding_conditions(self, profile: str, status: str, seconds: float, waited: list[str],
                                   counted: list[str]) -> None:
        """The wait's outcome for upstream's ``scheduler_dra_bindingconditions_*`` metrics."""
        ...


def timestamp_clock(handle: Handle) -> float:
    """Now, on the clock claims' ``allocationTimestamp`` is written with: the wall clock in ``run``
    (the API server's time; the scheduler's own clock there is monotonic), the simulated clock in
    ``simulate``, whose claim writes stamp its time."""
    client = handle.client
    if isinstance(client, BindingConditionsReported) and client.binding_conditions_reported():
        return time.time()
    return handle.now()


def pre_bind_wait(handle: Handle, manager: DraManager, features: Features, claims: Sequence[ResourceClaim],
                  pod: PodInfo, node_name: str, timeout: float = DEFAULT_BINDING_TIMEOUT) -> Status | None:
    """The end of upstream's PreBind: with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    on and a device with binding conditions allocated, the ``BindingConditionsPending`` event, then
    the wait; an error status when a device failed or the time ran out."""
    if not (features.enable_dra_device_binding_conditions and features.enable_dra_resource_claim_device_status):
        return None
    # The claims first: a check against a runtime_checkable protocol costs more than this scan,
    # and almost no pod waits.
    if not has_binding_conditions(claims):
        return None
    client = handle.client
    if not isinstance(client, BindingConditionsReported) or not client.binding_conditions_reported():
        return None
    handle.event_recorder.record_event(pod, "Normal", "BindingConditionsPending",
                                       f"waiting for binding conditions for device on node {node_name}")
    def sleep(seconds: float) -> None:
        if not client.wait_while_running(seconds):
            raise BindingConditionError(CONTEXT_CANCELED)

    started = time.monotonic()
    failure: BindingConditionError | None = None
    try:
        wait_for_binding_conditions(claims, lambda claim: _latest(manager, claim), timeout, sleep=sleep)
    except BindingConditionError as err:
        failure = err
    waited = [r.driver for c in claims if c.allocation is not None for r in c.allocation.devices]
    counted = [r.driver for c in claims if c.allocation is not None for r in c.allocation.devices
               if r.binding_conditions]
    client.observe_binding_conditions(handle.profile_name, _outcome(failure), time.monotonic() - started,
                                      waited, counted)
    return None if failure is None else Status.as_error(failure)


def _outcome(failure: BindingConditionError | None) -> str:
    """The metrics' ``status`` label: success, failure, timeout or error."""
    if failure is None:
        return "success"
    text = str(failure)
    if text.startswith(DEVICE_BINDING_FAILED):
        return "failure"
    if text.startswith(DEVICE_BINDING_TIMEOUT):
        return "timeout"
    return "error"
