"""DynamicResources' metrics in ``run``, upstream's names and labels (pkg/scheduler/metrics, ALPHA):

* ``scheduler_resourceclaim_creates_total{status}``: PreBind's creations of the claim of a
  pod's DRA-backed extended resources, ``success`` or ``failure`` (with DRAExtendedResource);
* ``scheduler_dra_bindingconditions_allocations_total{profile,driver,status}``: once per
  allocated device with binding conditions, per PreBind that waited for them;
* ``scheduler_dra_bindingconditions_wait_duration_seconds{profile,driver,status}``: how long
  that PreBind waited, once per allocated device of the pod's claims (with
  DRADeviceBindingConditions).

``status`` of the last two is how the wait ended: ``success``, ``failure`` (a binding failure
condition), ``timeout`` or ``error``. The counts come from the cluster client
(``ResourceClaimWrites``), which the plugin reports to.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram

from ...framework.features import Features

__all__ = ["ClaimMetrics"]

# metrics.ExponentialBuckets(0.1, 2, 14)
_WAIT_BUCKETS = tuple(0.1 * 2 ** i for i in range(14))


class ClaimMetrics:
    """Registered only for the gates upstream registers them under."""

    def __init__(self, registry: CollectorRegistry, features: Features) -> None:
        self._creates: Counter | None = None
        self._allocations: Counter | None = None
        self._wait: Histogram | None = None
        if features.enable_dra_extended_resource:
            self._creates = Counter("scheduler_resourceclaim_creates", "[ALPHA] Number of ResourceClaims creation "
                                    "requests within scheduler", ("status",), registry=registry)
        if features.enable_dra_device_binding_conditions:
            self._allocations = Counter(
                "scheduler_dra_bindingconditions_allocations", "[ALPHA] Number of allocations using devices with "
                "BindingConditions, counted per driver per scheduling attempt", ("profile", "driver", "status"),
                registry=registry)
            self._wait = Histogram(
                "scheduler_dra_bindingconditions_wait_duration_seconds", "[ALPHA] Time in seconds spent waiting for "
                "BindingConditions to be satisfied during PreBind.", ("profile", "driver", "status"),
                registry=registry, buckets=_WAIT_BUCKETS)

    def claim_created(self, ok: bool) -> None:
        if self._creates is not None:
            self._creates.labels("success" if ok else "failure").inc()

    def binding_conditions(self, profile: str, status: str, seconds: float, waited: Iterable[str],
                           counted: Iterable[str]) -> None:
        """One PreBind's wait: ``waited`` the driver of every allocated device, ``counted`` of
        every device with binding conditions."""
        if self._wait is not None:
            for driver in waited:
                self._wait.labels(profile, driver, status).observe(seconds)
        if self._allocations is not None:
            for driver in counted:
                self._allocations.labels(profile, driver, status).inc()
