"""`kubesched run` as a process: leader election between replicas, a kill in the middle of
binding, health endpoints, and one clear line for every way it can't start."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import (Kubesched, node, node_of, pod, scheduled_condition, scheduler_config, wait_until,
                                write_kubeconfig)

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _lease_holder(server: APIServer, name: str = "kube-scheduler") -> str | None:
    lease = server.get("Lease", "kube-system", name)
    return (lease or {}).get("spec", {}).get("holderIdentity") or None


# -- leader election --------------------------------------------------------------------
def test_two_replicas_one_leads_and_the_other_takes_over_when_it_stops(server: APIServer, kubeconfig: Path,
                                                                      started: list[Kubesched]) -> None:
    server.create(node("n1"))
    config = lambda: scheduler_config(leader_elect=True, lease_seconds=3.0)  # noqa: E731
    first = Kubesched(server, kubeconfig, config(), identity="replica-a").start()
    started.append(first)
    wait_until(lambda: _lease_holder(server) == "replica-a", what="replica-a leading")
    second = Kubesched(server, kubeconfig, config(), identity="replica-b").start()
    started.append(second)
    server.create(pod("p1"))
    wait_until(lambda: node_of(server, "p1"), what="p1 bound by the leader")
    assert second.call(lambda live: live.cycles) == 0  # the standby never schedules
    assert first.stop() == 0  # SIGTERM-like stop: the Lease is released
    wait_until(lambda: _lease_holder(server) == "replica-b", timeout=10, what="replica-b taking over")
    server.create(pod("p2"))
    wait_until(lambda: node_of(server, "p2"), what="p2 bound by the new leader")
    assert_invariants(server, second)
    # client-go's LeaseLock.RecordEvent: core/v1 Events about the Lease, from the first profile's name.
    said = [(e["message"], e["reason"], e["involvedObject"]["kind"], e["source"]["component"])
            for e in server.list("Event", "kube-system")]
    assert ("replica-a became leader", "LeaderElection", "Lease", "default-scheduler") in said
    assert ("replica-a stopped leading", "LeaderElection", "Lease", "default-scheduler") in said
    assert ("replica-b became leader", "LeaderElection", "Lease", "default-scheduler") in said


def test_a_replica_that_loses_its_lease_stops_scheduling_and_exits_1(server: APIServer, kubeconfig: Path,
                                                                    started: list[Kubesched]) -> None:
    server.create(node("n1"))
    sched = Kubesched(server, kubeconfig, scheduler_config(leader_elect=True, lease_seconds=3.0),
                      identity="replica-a").start()
    started.append(sched)
    wait_until(lambda: _lease_holder(server) == "replica-a", what="leading")
    server.faults.add(method="PUT", path=r"/leases/kube-scheduler", status=500, times=None)
    wait_until(lambda: not sched.running, timeout=10, what="the process ending after the renew deadline")
    assert sched.exit_code == 1


# -- a real process ------------------------------------------------------------------------
def _spawn(kubeconfig: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli.main", "run", "--kubeconfig", str(kubeconfig), "--leader-elect=false",
         "--bind-address", "127.0.0.1", "--port", str(port), *extra],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError:
        return 0, ""


def test_the_process_serves_health_readiness_and_metrics(server: APIServer, kubeconfig: Path) -> None:
    server.create(node("n1"))
    server.create(pod("p"))
    server.create(pod("huge", cpu="64"))
    port = _free_port()
    proc = _spawn(kubeconfig, port)
    try:
        wait_until(lambda: _get(port, "/readyz")[0] == 200, timeout=30, what="/readyz ok")
        assert _get(port, "/healthz") == (200, "ok")
        assert _get(port, "/livez")[0] == 200
        wait_until(lambda: node_of(server, "p"), what="the pod bound")
        wait_until(lambda: scheduled_condition(server, "huge"), what="the huge pod reported")
        expected = [
            'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0',
            'scheduler_pending_pods{queue="active"} 0.0',
            'scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"} 1.0',
            'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"}',
            'scheduler_framework_extension_point_duration_seconds_count{extension_point="Bind",'
            'profile="default-scheduler",status="Success"} 1.0',
            'scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",'
            'profile="default-scheduler",status="Success"}',
        ]
        # The API server shows the binding before kubesched has read the answer and recorded it.
        wait_until(lambda: all(line in _get(port, "/metrics")[1] for line in expected), what="the metrics")
        status, body = _get(port, "/metrics")
        assert status == 200
        assert all(line in body for line in expected)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_a_scheduler_killed_mid_binding_is_replaced_without_losing_or_double_binding(server: APIServer,
                                                                                    kubeconfig: Path) -> None:
    for i in range(3):
        server.create(node(f"n{i}", cpu="2"))
    server.faults.add(method="POST", path=r"/binding", status=None, delay=1.5, times=None)  # every bind hangs
    names = [f"p{i}" for i in range(12)]
    for name in names:
        server.create(pod(name, cpu="500m"))
    first = _spawn(kubeconfig, _free_port())
    try:
        wait_until(lambda: any("binding" in path for _, path in server.requests), timeout=30, what="binds in flight")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    server.faults.clear()
    second = _spawn(kubeconfig, _free_port())
    try:
        wait_until(lambda: all(node_of(server, n) for n in names), timeout=30, what="all pods bound by the replacement")
        assert_invariants(server, None)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(20)


# -- bad input: one line, non-zero, no traceback -------------------------------------------
def _run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", "--leader-elect=false", "--port", "0", *args])
    return result.exit_code, result.output


def _error_line(output: str) -> str:
    """The one line naming the cause: the last one, with no traceback anywhere (log lines of
    the attempts may come before it)."""
    assert "Traceback" not in output
    lines = output.strip().splitlines()
    assert [line for line in lines if line.startswith("error: ")] == lines[-1:], output
    return lines[-1]


def test_an_unreachable_api_server_is_one_line(tmp_path: Path) -> None:
    port = _free_port()
    kubeconfig = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    code, output = _run_cli("--kubeconfig", str(kubeconfig), "--startup-timeout", "1s")
    assert code == 1
    last = output.strip().splitlines()[-1]  # after the log lines of the retries
    assert last.startswith(f"error: cannot reach the API server at http://127.0.0.1:{port}: ")
    assert "Traceback" not in output


def test_a_missing_kubeconfig_is_one_line(tmp_path: Path) -> None:
    code, output = _run_cli("--kubeconfig", str(tmp_path / "nope"))
    assert code == 1
    assert _error_line(output) == f"error: kubeconfig {tmp_path / 'nope'}: file does not exist"


def test_a_malformed_kubeconfig_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "kc"
    bad.write_text("clusters: [this is not: a kubeconfig")
    code, output = _run_cli("--kubeconfig", str(bad))
    assert code == 1
    assert _error_line(output).startswith("error: kubeconfig ")


def test_rejected_credentials_are_one_line(server: APIServer, kubeconfig: Path) -> None:
    server.faults.add(method="GET", path=r"/api/v1/pods", status=401, times=None)
    code, output = _run_cli("--kubeconfig", str(kubeconfig))
    assert code == 1
    assert "rejected the credentials (401 Unauthorized)" in _error_line(output)


def test_forbidden_rbac_is_one_line(server: APIServer, kubeconfig: Path) -> None:
    server.faults.add(method="GET", path=r"/api/v1/nodes", status=403, times=None)
    code, output = _run_cli("--kubeconfig", str(kubeconfig))
    assert code == 1
    assert _error_line(output).startswith("error: forbidden by the API server's RBAC")


def test_an_invalid_config_file_is_one_line_per_problem(tmp_path: Path, kubeconfig: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "podMaxBackoffSeconds: -1\n")
    code, output = _run_cli("--config", str(config), "--kubeconfig", str(kubeconfig))
    assert code == 2
    assert all(line.startswith("error: ") for line in output.splitlines()), output
    assert "Traceback" not in output


@pytest.mark.parametrize("flag", ["--leader-elect-lease-duration=abc", "--leader-elect=maybe"])
def test_bad_flag_values_are_usage_errors(flag: str, kubeconfig: Path) -> None:
    result = CliRunner().invoke(cli, ["run", flag, "--kubeconfig", str(kubeconfig)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_sigterm_exits_0(server: APIServer, kubeconfig: Path) -> None:
    port = _free_port()
    proc = _spawn(kubeconfig, port)
    wait_until(lambda: _get(port, "/readyz")[0] == 200, timeout=30, what="ready")
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(20) == 0


def test_with_delay_cache_until_active_a_standby_fills_its_cache_only_once_it_leads(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    server.create(node("n1"))
    config = lambda: scheduler_config({"delayCacheUntilActive": True}, leader_elect=True, lease_seconds=3.0)  # noqa: E731
    leader = Kubesched(server, kubeconfig, config(), identity="replica-a").start()
    started.append(leader)
    wait_until(lambda: _lease_holder(server) == "replica-a", what="replica-a leading")
    standby = Kubesched(server, kubeconfig, config(), identity="replica-b").start(wait_synced=False)
    started.append(standby)
    time.sleep(1.0)  # ample time for an undelayed replica to sync (it takes a few milliseconds here)
    assert standby.call(lambda live: (live.synced(), live.scheduler.cache.node_names())) == (False, [])
    leader.stop()
    wait_until(lambda: standby.call(lambda live: live.synced()), timeout=10, what="the new leader's caches filled")
    server.create(pod("p"))
    wait_until(lambda: node_of(server, "p") == "n1", what="the pod bound by the new leader")
