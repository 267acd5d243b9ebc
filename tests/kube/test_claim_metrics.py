"""DynamicResources' metrics in run: upstream's names, labels and gates."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from kubesched.cluster.kube.claim_metrics import ClaimMetrics
from kubesched.framework.features import DEFAULT_FEATURES, Features


def test_claim_creations_are_counted_by_outcome() -> None:
    registry = CollectorRegistry()
    metrics = ClaimMetrics(registry, DEFAULT_FEATURES)
    metrics.claim_created(True)
    metrics.claim_created(True)
    metrics.claim_created(False)
    assert registry.get_sample_value("scheduler_resourceclaim_creates_total", {"status": "success"}) == 2
    assert registry.get_sample_value("scheduler_resourceclaim_creates_total", {"status": "failure"}) == 1


def test_a_wait_counts_devices_with_binding_conditions_and_times_every_allocated_device() -> None:
    registry = CollectorRegistry()
    metrics = ClaimMetrics(registry, DEFAULT_FEATURES)
    metrics.binding_conditions("default-scheduler", "timeout", 3.0, ["gpu.example.com", "nic.example.com"],
                               ["gpu.example.com"])
    labels = {"profile": "default-scheduler", "driver": "gpu.example.com", "status": "timeout"}
    assert registry.get_sample_value("scheduler_dra_bindingconditions_allocations_total", labels) == 1
    assert registry.get_sample_value("scheduler_dra_bindingconditions_wait_duration_seconds_count", labels) == 1
    assert registry.get_sample_value("scheduler_dra_bindingconditions_wait_duration_seconds_sum", labels) == 3.0
    nic = {**labels, "driver": "nic.example.com"}
    assert registry.get_sample_value("scheduler_dra_bindingconditions_wait_duration_seconds_count", nic) == 1
    assert registry.get_sample_value("scheduler_dra_bindingconditions_allocations_total", nic) is None


def test_metrics_of_a_disabled_gate_are_not_registered() -> None:
    registry = CollectorRegistry()
    metrics = ClaimMetrics(registry, Features(enable_dra_extended_resource=False,
                                              enable_dra_device_binding_conditions=False))
    metrics.claim_created(True)
    metrics.binding_conditions("p", "success", 1.0, ["d"], ["d"])
    names = {m.name for m in registry.collect()}
    assert not names & {"scheduler_resourceclaim_creates", "scheduler_dra_bindingconditions_allocations",
                        "scheduler_dra_bindingconditions_wait_duration_seconds"}
