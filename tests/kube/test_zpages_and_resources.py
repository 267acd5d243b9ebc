"""The z-pages' text and /metrics/resources' families, as upstream writes them."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
import pytest

from kubesched.cluster.kube.pod_resources import limit_parts, limits_of, resources_exposition
from kubesched.cluster.kube.zpages import flagz_text, statusz_text
from tests.helpers import make_pod

WARNING = ("Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees "
           "and is for debugging purposes only.")


@pytest.mark.parametrize(("draw", "delimiter"), [(0.0, ":"), (0.3, ": "), (0.6, "="), (0.9, " ")])
def test_flagz_lists_every_flag_sorted_with_a_random_delimiter(draw: float, delimiter: str) -> None:
    text = flagz_text("kube-scheduler", {"v": "2", "leader-elect": "true"}, rng=lambda: draw)
    assert text == f"\nkube-scheduler flagz\n{WARNING}\n\nleader-elect{delimiter}true\nv{delimiter}2\n"


def test_statusz_shows_start_uptime_versions_and_paths() -> None:
    text = statusz_text("kube-scheduler", 0.0, 3725.0, "0.1.0", ["/healthz", "/metrics"], rng=lambda: 0.0)
    lines = text.splitlines()
    assert lines[:4] == ["", "kube-scheduler statusz", WARNING, ""]
    assert lines[4] == "Started: Thu Jan 01 00:00:00 UTC 1970"
    assert lines[5] == "Up: 1 hr 02 min 05 sec"
    assert lines[6].startswith("Go version: python")
    assert lines[7:] == ["Binary version: 0.1.0", "Paths: /healthz /metrics"]


def test_limits_are_summed_over_containers_at_least_the_largest_init_container_plus_overhead() -> None:
    raw = {"spec": {
        "containers": [{"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
                       {"resources": {"limits": {"cpu": "250m"}}}],
        "initContainers": [{"resources": {"limits": {"cpu": "2", "nvidia.com/gpu": "1"}}}],
        "overhead": {"cpu": "100m", "memory": "64Mi"},
    }}
    assert limits_of(raw) == {"cpu": 2.1, "memory": 2 ** 30 + 64 * 2 ** 20, "nvidia.com/gpu": 1.0}


def test_a_pod_without_limits_has_none() -> None:
    assert limits_of({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}) == {}


def test_resource_metrics_have_upstreams_labels_units_and_leave_zero_out() -> None:
    bound = make_pod("p", cpu="1500m", memory="1Gi", node_name="n1", priority=7)
    pending = make_pod("q", cpu="250m")
    text = resources_exposition(lambda: [(bound, {"memory": 2.0 ** 31}), (pending, {})])().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    requests = {(s.labels["pod"], s.labels["resource"], s.labels["unit"], s.labels["node"], s.labels["priority"]):
                s.value for s in families["kube_pod_resource_request"].samples}
    assert requests == {("p", "cpu", "cores", "n1", "7"): 1.5, ("p", "memory", "bytes", "n1", "7"): 2.0 ** 30,
                        ("q", "cpu", "cores", "", "0"): 0.25}
    (limit,) = families["kube_pod_resource_limit"].samples
    assert (limit.labels["pod"], limit.labels["resource"], limit.value) == ("p", "memory", 2.0 ** 31)
    assert "# HELP kube_pod_resource_limit [STABLE]" in text


def test_the_parts_kept_for_later_give_the_same_limits_and_nothing_when_there_are_none() -> None:
    raw = {"spec": {"containers": [{"name": "a", "image": "x", "resources": {"limits": {"cpu": "1"}}},
                                   {"name": "b", "image": "y"}],
                    "initContainers": [{"resources": {"limits": {"memory": "1Gi"}}}], "overhead": {"cpu": "10m"}}}
    parts = limit_parts(raw)
    assert parts is not None and limits_of(parts) == limits_of(raw) == {"cpu": 1.01, "memory": 2.0 ** 30}
    assert limit_parts({"spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}) is None
