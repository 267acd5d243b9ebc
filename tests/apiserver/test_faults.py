"""Fault injection, the request log, the /_test/ controls and the standalone entry point."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

from tests.apiserver.conftest import pod
from tests.apiserver.server import APIServer

NS = "/api/v1/namespaces/default/pods"


def test_injected_500_answers_once_then_the_real_answer(client: httpx.Client, server: APIServer) -> None:
    server.faults.add(method="POST", path=r"/binding$", status=500, times=1)
    client.post(NS, json=pod("p"))
    bind = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    first = client.post(f"{NS}/p/binding", json=bind)
    second = client.post(f"{NS}/p/binding", json=bind)
    assert (first.status_code, first.json()["reason"]) == (500, "InternalError")
    assert second.status_code == 201


def test_injected_429_is_plain_text_with_retry_after_as_the_real_server_sends_it(client: httpx.Client,
                                                                                 server: APIServer) -> None:
    server.faults.add(method="GET", path=r"/api/v1/nodes", status=429, retry_after=3)
    response = client.get("/api/v1/nodes")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "3"
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.text == "Too many requests, please try again later.\n"


def test_an_injected_429_with_a_reason_is_a_status(client: httpx.Client, server: APIServer) -> None:
    server.faults.add(method="GET", path=r"/api/v1/nodes", status=429, retry_after=3, reason="TooManyRequests")
    response = client.get("/api/v1/nodes")
    assert response.json()["reason"] == "TooManyRequests"
    assert response.json()["details"]["retryAfterSeconds"] == 3


def test_delay_only_fault_still_gives_the_real_answer(client: httpx.Client, server: APIServer) -> None:
    server.faults.add(path=r"/api/v1/nodes", status=None, delay=0.05)
    assert client.get("/api/v1/nodes").json()["kind"] == "NodeList"
    assert server.faults.rules[0].hits == 1


def test_faults_match_only_their_method(client: httpx.Client, server: APIServer) -> None:
    server.faults.add(method="POST", path=r"/pods", status=500, times=None)
    assert client.get(NS).status_code == 200
    assert client.post(NS, json=pod("p")).status_code == 500


def test_requests_are_logged_with_method_and_query(client: httpx.Client, server: APIServer) -> None:
    client.get(NS, params={"limit": "5"})
    assert ("GET", f"{NS}?limit=5") in server.requests


def test_http_controls_load_compact_and_report(client: httpx.Client) -> None:
    loaded = client.post("/_test/load", json=[pod(f"p{i}") for i in range(3)]).json()
    assert loaded["loaded"] == 3
    client.post("/_test/compact")
    stats = client.get("/_test/stats").json()
    assert stats["objects"]["pods"] == 3 and stats["floor"] == stats["revision"]
    client.post("/_test/faults", json={"method": "GET", "path": "/api/v1/pods$", "status": 503})
    assert client.get("/api/v1/pods").status_code == 503
    assert client.get("/api/v1/pods").status_code == 200


def test_standalone_server_prints_ready_and_serves() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "tests.apiserver", "--port", "0"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:")
        url = line.split(" ", 1)[1]
        assert httpx.get(f"{url}/readyz", timeout=10, verify=False).text == "ok"
    finally:
        proc.terminate()
        proc.wait(10)


def test_many_pods_can_be_created_and_bound(client: httpx.Client, server: APIServer) -> None:
    for i in range(100):
        client.post(NS, json=pod(f"p{i}"))
    for i in range(100):
        client.post(f"{NS}/p{i}/binding", json={"metadata": {"name": f"p{i}"},
                                                 "target": {"kind": "Node", "name": "n"}})
    bound = client.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=n"}).json()["items"]
    assert len(bound) == 100


def test_fault_can_carry_upstreams_reason_and_message(client: httpx.Client, server: APIServer) -> None:
    server.faults.add(method="GET", path=r"continue=", status=410, reason="Expired", message="too old")
    body = client.get("/api/v1/pods", params={"continue": "x"}).json()
    assert (body["code"], body["reason"], body["message"]) == (410, "Expired", "too old")


def test_a_delayed_write_completes_after_its_client_gave_up(server: APIServer) -> None:
    server.create(pod("p"))
    server.faults.add(method="POST", path=r"/binding$", status=None, delay=0.3)
    with httpx.Client(base_url=server.url, timeout=0.05, verify=False) as http:
        try:
            http.post(f"{NS}/p/binding", json={"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n"}})
        except httpx.TimeoutException:
            pass
    deadline = time.monotonic() + 5
    while (server.get("Pod", "default", "p") or {}).get("spec", {}).get("nodeName") is None:
        assert time.monotonic() < deadline, "the binding was abandoned with its client"
        time.sleep(0.02)
