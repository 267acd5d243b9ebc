"""`kubesched run`'s metrics and z-pages as a process serves them: upstream's families
filled (cache size, event handling, binding goroutines, plugin evaluations, the API dispatcher's calls,
rest_client_*, process_*), the event writer's counts, /metrics/resources, /configz,
/flagz and /statusz."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

from tests.apiserver import APIServer
from tests.live.harness import node, node_of, pod, scheduled_condition, wait_until
from tests.live.test_run_process import _free_port, _get, _spawn


def _sample(body: str, line_start: str) -> float | None:
    for line in body.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_the_process_fills_upstreams_metrics_and_serves_its_z_pages(server: APIServer, kubeconfig: Path) -> None:
    server.create(node("n1"))
    limited = pod("p", cpu="250m", memory="64Mi")
    limited["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "500m", "memory": "128Mi"}
    server.create(limited)
    server.create(pod("huge", cpu="64"))
    port = _free_port()
    proc = _spawn(kubeconfig, port, "-v", "1")
    try:
        wait_until(lambda: _get(port, "/readyz")[0] == 200, timeout=30, what="/readyz ok")
        wait_until(lambda: node_of(server, "p"), what="the pod bound")
        wait_until(lambda: scheduled_condition(server, "huge"), what="the huge pod reported")
        wait_until(lambda: (_sample(_get(port, "/metrics")[1], "kubesched_events_written_total") or 0) >= 2,
                   what="both events written")
        _, body = _get(port, "/metrics")
        assert _sample(body, 'scheduler_cache_size{type="nodes"}') == 1.0
        assert _sample(body, 'scheduler_cache_size{type="pods"}') == 1.0
        assert _sample(body, 'scheduler_event_handling_duration_seconds_count{event="NodeAdd"}') == 1.0
        assert (_sample(body, 'scheduler_event_handling_duration_seconds_count{event="UnschedulablePodAdd"}')
                == 2.0)
        assert _sample(body, 'scheduler_event_handling_duration_seconds_count{event="AssignedPodAdd"}') == 1.0
        assert _sample(body, 'scheduler_goroutines{operation="binding"}') == 0.0
        assert _sample(body, 'scheduler_async_api_call_execution_total{call_type="pod_binding",result="success"}') \
            == 1.0
        assert _sample(body, 'scheduler_async_api_call_execution_total{call_type="pod_status_patch",'
                             'result="success"}') == 1.0
        assert _sample(body, 'scheduler_pending_async_api_calls{call_type="pod_status_patch"}') == 0.0
        assert re.search(r'^rest_client_requests_total\{code="201",host="127\.0\.0\.1:\d+",method="POST"\} ', body,
                         re.M)
        assert _sample(body, "process_cpu_seconds_total") > 0
        assert _sample(body, "kubesched_events_dropped_total") == 0.0
        # Each pod once through NodeResourcesFit's PreFilter and Filter on the one node (the huge
        # pod's preemption finds no victim, so, as upstream, it filters nothing again); a
        # single feasible node is not scored.
        for point in ("PreFilter", "Filter"):
            assert _sample(body, f'scheduler_plugin_evaluation_total{{extension_point="{point}",'
                                 'plugin="NodeResourcesFit",profile="default-scheduler"}') == 2.0
        assert 'extension_point="Score"' not in body
        assert "# HELP scheduler_scheduling_algorithm_duration_seconds [ALPHA]" in body

        status, resources = _get(port, "/metrics/resources")
        assert status == 200
        assert _sample(resources, 'kube_pod_resource_request{namespace="default",node="n1",pod="p",priority="0",'
                                  'resource="cpu",scheduler="default-scheduler",unit="cores"}') == 0.25
        assert _sample(resources, 'kube_pod_resource_limit{namespace="default",node="n1",pod="p",priority="0",'
                                  'resource="memory",scheduler="default-scheduler",unit="bytes"}') == 128 * 2 ** 20
        assert _sample(resources, 'kube_pod_resource_request{namespace="default",node="",pod="huge",priority="0",'
                                  'resource="cpu",scheduler="default-scheduler",unit="cores"}') == 64.0
        assert "# HELP kube_pod_resource_request [STABLE]" in resources

        status, configz = _get(port, "/configz")
        assert status == 200
        config = json.loads(configz)["componentconfig"]
        assert config["kind"] == "KubeSchedulerConfiguration"
        assert config["profiles"][0]["schedulerName"] == "default-scheduler"
        status, flagz = _get(port, "/flagz")
        assert status == 200 and flagz.startswith("\nkube-scheduler flagz\n")
        assert re.search(r"^leader-elect(:|: |=| )false$", flagz, re.M)
        status, statusz = _get(port, "/statusz")
        assert status == 200 and statusz.startswith("\nkube-scheduler statusz\n")
        assert re.search(r"^Binary version(:|: |=| ) 0\.1\.0$", statusz, re.M)
        assert "/metrics/resources" in statusz
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
