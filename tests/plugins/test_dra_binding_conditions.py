"""DynamicResources' PreBind wait for device binding conditions, as upstream's
isClaimReadyForBinding / isClaimTimeout / isPodReadyForBinding and the poll around them."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.dra import parse_resource_claim
from kubesched.plugins.dynamicresources.binding_conditions import (
    POLL_INTERVAL,
    BindingConditionError,
    claim_ready,
    claim_timed_out,
    has_binding_conditions,
    wait_for_binding_conditions,
)

ALLOCATED_AT = "2026-01-01T00:00:00Z"
T0 = 1767225600.0  # ALLOCATED_AT as a Unix time


def claim(*, conditions: dict[str, str] | None = None, binding: bool = True, allocated: bool = True,
          reason: str = "AttachFailed", message: str = "no slot") -> dict[str, Any]:
    """A claim of one device; ``conditions`` the driver reported for it (type -> status)."""
    result: dict[str, Any] = {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}
    if binding:
        result.update({"bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]})
    status: dict[str, Any] = {}
    if allocated:
        status["allocation"] = {"devices": {"results": [result]}, "allocationTimestamp": ALLOCATED_AT}
    if conditions is not None:
        status["devices"] = [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "conditions": [
            {"type": t, "status": s, "reason": reason, "message": message, "lastTransitionTime": ALLOCATED_AT}
            for t, s in conditions.items()]}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default", "uid": "u"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": status}


@pytest.mark.parametrize(("doc", "ready"), [
    (claim(allocated=False), False),
    (claim(binding=False), True),
    (claim(), False),  # no device status yet
    (claim(conditions={}), False),
    (claim(conditions={"attached": "False"}), False),
    (claim(conditions={"attached": "True"}), True),
    (claim(conditions={"attached": "True", "failed": "False"}), True),
])
def test_a_claim_is_ready_once_every_binding_condition_is_true(doc: dict[str, Any], ready: bool) -> None:
    assert claim_ready(doc) is ready


def test_a_true_binding_failure_condition_fails_with_upstreams_text() -> None:
    with pytest.raises(BindingConditionError) as failure:
        claim_ready(claim(conditions={"attached": "False", "failed": "True"}))
    assert str(failure.value) == 'device binding failed: claim=c, reason=AttachFailed, message="no slot"'


@pytest.mark.parametrize(("elapsed", "timed_out"), [(599.0, False), (600.0, False), (601.0, True)])
def test_a_claim_times_out_binding_timeout_after_its_allocation(elapsed: float, timed_out: bool) -> None:
    assert claim_timed_out(claim(), 600.0, T0 + elapsed) is timed_out


def test_only_devices_with_binding_conditions_time_out() -> None:
    assert not claim_timed_out(claim(binding=False), 600.0, T0 + 10_000)


def test_the_pod_waits_only_when_an_allocated_device_has_binding_conditions() -> None:
    assert has_binding_conditions([parse_resource_claim(claim())])
    assert not has_binding_conditions([parse_resource_claim(claim(binding=False))])
    assert not has_binding_conditions([parse_resource_claim(claim(allocated=False))])


class Clock:
    """A clock that moves only when the wait sleeps; the driver reports after ``report_after`` seconds."""

    def __init__(self, report_after: float | None, outcome: str = "attached") -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.report_after = report_after
        self.outcome = outcome

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def lookup(self, _: object) -> dict[str, Any]:
        if self.report_after is not None and self.now >= self.report_after:
            return claim(conditions={self.outcome: "True"})
        return claim()


def _wait(clock: Clock, timeout: float = 600.0) -> None:
    wait_for_binding_conditions([parse_resource_claim(claim())], clock.lookup, timeout, sleep=clock.sleep,
                                clock=lambda: clock.now, wall_clock=lambda: T0 + clock.now)


def test_the_wait_checks_at_once_then_every_five_seconds() -> None:
    clock = Clock(report_after=12.0)
    _wait(clock)
    assert clock.sleeps == [POLL_INTERVAL] * 3 and clock.now == 15.0


def test_conditions_already_met_need_no_sleep() -> None:
    clock = Clock(report_after=0.0)
    _wait(clock)
    assert clock.sleeps == []


def test_a_failure_reported_while_waiting_ends_the_wait() -> None:
    clock = Clock(report_after=7.0, outcome="failed")
    with pytest.raises(BindingConditionError, match="^device binding failed: claim=c"):
        _wait(clock)
    assert clock.now == 10.0


def test_the_wait_gives_up_at_the_binding_timeout() -> None:
    clock = Clock(report_after=None)
    with pytest.raises(BindingConditionError, match="^device binding timeout: context deadline exceeded$"):
        _wait(clock, timeout=12.0)
    assert clock.sleeps == [5.0, 5.0, 2.0]


def test_an_allocation_older_than_the_timeout_fails_at_the_first_check() -> None:
    """A retried pod whose devices were allocated long ago (upstream's isClaimTimeout)."""
    clock = Clock(report_after=None)
    clock.now = 0.0
    with pytest.raises(BindingConditionError, match="^device binding timeout: claim=c$"):
        wait_for_binding_conditions([parse_resource_claim(claim())], clock.lookup, 60.0, sleep=clock.sleep,
                                    clock=lambda: clock.now, wall_clock=lambda: T0 + 3600.0)


def test_a_claim_gone_from_the_cache_is_an_error() -> None:
    with pytest.raises(BindingConditionError, match='^could not find ResourceClaim "default/c"$'):
        wait_for_binding_conditions([parse_resource_claim(claim())], lambda _: None, 60.0, sleep=lambda _: None)
