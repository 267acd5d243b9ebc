"""Extension-point and per-plugin timings, as the live mode's metrics record them."""

from __future__ import annotations

from kubesched.framework import CycleState
from kubesched.objects.pod import parse_pod

from ..helpers import Cluster, framework, node, only

POD = parse_pod({"metadata": {"name": "p", "namespace": "default", "uid": "p"},
                 "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}})


def _framework():
    cluster = Cluster([node("n1"), node("n2")])
    return cluster, framework(cluster, only("NodeResourcesFit", "NodeResourcesBalancedAllocation"))


def test_an_observed_framework_reports_each_extension_point_with_its_status() -> None:
    cluster, fwk = _framework()
    seen: list[tuple[str, str]] = []
    fwk.observe_point = lambda point, code, seconds: seen.append((point, code))
    fwk.run_pre_filter(CycleState(), POD, cluster.snapshot)
    fwk.run_reserve(CycleState(), POD, "n1")
    assert seen == [("PreFilter", "Success"), ("Reserve", "Success")]


def test_plugins_are_timed_only_in_sampled_cycles() -> None:
    cluster, fwk = _framework()
    seen: list[tuple[str, str, str]] = []
    fwk.observe_plugin = lambda plugin, point, code, seconds: seen.append((plugin, point, code))
    fwk.run_pre_filter(CycleState(), POD, cluster.snapshot)
    assert seen == []
    sampled = CycleState()
    sampled.record_plugin_metrics = True
    fwk.run_pre_filter(sampled, POD, cluster.snapshot)
    assert ("NodeResourcesFit", "PreFilter", "Success") in seen


def test_an_unobserved_framework_reports_nothing() -> None:
    cluster, fwk = _framework()
    state = CycleState()
    state.record_plugin_metrics = True
    result, status, _ = fwk.run_pre_filter(state, POD, cluster.snapshot)  # no observer set: just runs
    assert status is None


def test_an_observer_removed_hears_no_more_runs() -> None:
    cluster, fwk = _framework()
    seen: list[str] = []
    fwk.observe_point = lambda point, code, seconds: seen.append(point)
    fwk.run_reserve(CycleState(), POD, "n1")
    fwk.observe_point = None  # the points run unwrapped again
    fwk.run_reserve(CycleState(), POD, "n1")
    fwk.run_pre_filter(CycleState(), POD, cluster.snapshot)
    assert seen == ["Reserve"]
