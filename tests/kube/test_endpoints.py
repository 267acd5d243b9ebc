"""The health and metrics endpoints answer as kube-scheduler's (component-base healthz)."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from kubesched.cluster.kube.endpoints import Check, Endpoints
from kubesched.scheduler.metrics import SchedulerMetrics


class Probe:
    def __init__(self, status: int, body: str, content_type: str) -> None:
        self.status, self.body, self.content_type = status, body, content_type


async def get(endpoints: Endpoints, path: str) -> Probe:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{endpoints.port}{path}") as response:
            return Probe(response.status, await response.text(), response.headers["Content-Type"])


def serve(scenario: Callable[[Endpoints], Awaitable[None]], metrics: SchedulerMetrics | None = None,
          checks: dict[str, Check] | None = None, ready_checks: dict[str, Check] | None = None,
          live_checks: dict[str, Check] | None = None) -> None:
    async def main() -> None:
        endpoints = Endpoints(metrics or SchedulerMetrics(), checks=checks, ready_checks=ready_checks,
                              live_checks=live_checks)
        await endpoints.start("127.0.0.1", 0)
        try:
            await scenario(endpoints)
        finally:
            await endpoints.stop()

    asyncio.run(asyncio.wait_for(main(), 10))


def leader_ok() -> bool | str:
    return True


def test_live_checks_is_a_synonym_of_checks() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        assert (await get(endpoints, "/healthz")).body.startswith("[-]leaderElection failed")
        assert (await get(endpoints, "/readyz")).body.startswith("[-]leaderElection failed")

    serve(scenario, live_checks={"leaderElection": lambda: False})


def test_healthy_probes_answer_ok() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        assert endpoints.port > 0
        for path in ("/healthz", "/livez", "/readyz"):
            probe = await get(endpoints, path)
            assert (probe.status, probe.body) == (200, "ok")
            assert probe.content_type == "text/plain; charset=utf-8"

    serve(scenario, checks={"leaderElection": leader_ok}, ready_checks={"sched-handler-sync": lambda: True})


def test_verbose_lists_every_check_in_kube_schedulers_order() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/readyz?verbose")
        assert probe.body == ("[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\n"
                              "readyz check passed\n")
        assert (await get(endpoints, "/livez?verbose")).body == "[+]ping ok\nlivez check passed\n"

    serve(scenario, checks={"leaderElection": leader_ok}, ready_checks={"sched-handler-sync": lambda: True})


def test_a_failing_check_answers_500_with_the_reason_withheld() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/readyz")
        assert probe.status == 500
        assert probe.body == ("[+]leaderElection ok\n[+]shutdown ok\n"
                              "[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n")
        healthz = await get(endpoints, "/healthz")
        assert (healthz.status, healthz.body) == (200, "ok")  # readiness-only checks stay out of healthz

    serve(scenario, checks={"leaderElection": leader_ok},
          ready_checks={"sched-handler-sync": lambda: "handlers are not fully synchronized"})


def test_a_failing_leader_election_fails_healthz_but_not_livez() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/healthz")
        assert probe.status == 500
        assert probe.body == "[-]leaderElection failed: reason withheld\nhealthz check failed\n"
        assert (await get(endpoints, "/livez")).status == 200

    serve(scenario, checks={"leaderElection": lambda: "failed election to renew leadership on lease kube-scheduler"})


def test_a_single_check_shows_its_reason() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/healthz/leaderElection")
        assert probe.status == 500
        assert probe.body == "internal server error: lost it\n"
        assert (await get(endpoints, "/readyz/shutdown")).body == "ok"

    serve(scenario, checks={"leaderElection": lambda: "lost it"})


def test_a_crashing_check_is_a_failing_check() -> None:
    def boom() -> bool | str:
        raise RuntimeError("bug")

    async def scenario(endpoints: Endpoints) -> None:
        assert (await get(endpoints, "/healthz")).status == 500

    serve(scenario, checks={"boom": boom})


def test_excluded_checks_are_skipped_and_unknown_exclusions_warned() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/healthz?exclude=leaderElection&exclude=nope&verbose")
        assert (probe.status, probe.body) == (200, '[+]leaderElection excluded: ok\n'
                                              'warn: some health checks cannot be excluded: no matches for "nope"\n'
                                              'healthz check passed\n')

    serve(scenario, checks={"leaderElection": lambda: False})


def test_without_checks_healthz_runs_ping() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        assert (await get(endpoints, "/healthz?verbose")).body == "[+]ping ok\nhealthz check passed\n"

    serve(scenario)


def test_readyz_fails_once_shutdown_begins() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        endpoints.begin_shutdown()
        probe = await get(endpoints, "/readyz")
        assert probe.status == 500 and "[-]shutdown failed: reason withheld\n" in probe.body
        assert (await get(endpoints, "/livez")).status == 200

    serve(scenario)


def test_metrics_are_scraped_in_the_text_format() -> None:
    metrics = SchedulerMetrics()
    metrics.attempt("scheduled", "default-scheduler", 0.01)

    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/metrics")
        assert probe.status == 200
        assert probe.content_type.startswith("text/plain; version=0.0.4")
        assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in probe.body

    serve(scenario, metrics=metrics)


def test_metrics_with_name_parameters_answer_only_the_named_families() -> None:
    metrics = SchedulerMetrics()
    metrics.attempt("scheduled", "default-scheduler", 0.01)

    async def scenario(endpoints: Endpoints) -> None:
        probe = await get(endpoints, "/metrics?name[]=scheduler_schedule_attempts_total")
        assert probe.status == 200
        assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in probe.body
        assert [line for line in probe.body.splitlines() if not line.startswith("#")] == [
            'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0']

    serve(scenario, metrics=metrics)


def test_a_kept_alive_connection_serves_one_request_after_another() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        async with aiohttp.ClientSession() as session:
            for path in ("/healthz", "/livez", "/readyz", "/nope"):
                async with session.get(f"http://127.0.0.1:{endpoints.port}{path}") as response:
                    assert response.status == (404 if path == "/nope" else 200)
                    await response.read()
            async with session.head(f"http://127.0.0.1:{endpoints.port}/livez") as response:
                assert (response.status, await response.read()) == (200, b"")

    serve(scenario)


def test_other_paths_are_not_found() -> None:
    async def scenario(endpoints: Endpoints) -> None:
        for path in ("/", "/configz", "/healthz/nope"):
            probe = await get(endpoints, path)
            assert (probe.status, probe.body) == (404, "404 page not found\n")

    serve(scenario)


def test_with_an_ssl_context_the_endpoints_serve_https(tmp_path: Path) -> None:
    x509 = pytest.importorskip("cryptography.x509")
    hashes = pytest.importorskip("cryptography.hazmat.primitives.hashes")
    serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
    ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_file, key_file)
    client_context = ssl.create_default_context(cafile=str(cert_file))

    async def main() -> None:
        endpoints = Endpoints(SchedulerMetrics())
        await endpoints.start("127.0.0.1", 0, ssl=server_context)
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(f"https://127.0.0.1:{endpoints.port}/healthz", ssl=client_context) as response:
                    assert (response.status, await response.text()) == (200, "ok")
        finally:
            await endpoints.stop()

    asyncio.run(asyncio.wait_for(main(), 10))
