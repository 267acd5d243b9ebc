"""`kubesched run` over TLS: the server is verified against the kubeconfig's CA, as
against a real cluster's; a server that CA did not sign is refused."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, node, node_of, pod, wait_until


def test_the_server_is_verified_against_the_kubeconfigs_certificate_authority(
        server: APIServer, kubeconfig: Path, started: list[Kubesched]) -> None:
    assert server.url.startswith("https://")
    cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
    assert cluster["certificate-authority-data"]
    server.create(node("n1"))
    server.create(pod("p"))
    sched = Kubesched(server, kubeconfig).start()
    started.append(sched)
    wait_until(lambda: node_of(server, "p") == "n1", what="the pod bound over TLS")
    assert_invariants(server, sched)


def test_a_server_the_kubeconfig_does_not_trust_is_refused(server: APIServer, tmp_path: Path) -> None:
    untrusting = tmp_path / "kc"
    untrusting.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "t",
        "clusters": [{"name": "t", "cluster": {"server": server.url}}],  # no CA: the system's roots only
        "users": [{"name": "t", "user": {"token": "x"}}],
        "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}]}))
    result = CliRunner().invoke(cli, ["run", "--leader-elect=false", "--port", "0", "--kubeconfig", str(untrusting),
                                      "--startup-timeout", "1s"])
    assert result.exit_code == 1
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot reach the API server at {server.url}: ")
    # client-go's words for it (Go's url.Error over crypto/tls and x509's errors).
    assert last.endswith(f'Get "{server.url}/api/v1/pods?limit=1": tls: failed to verify certificate: '
                         "x509: certificate signed by unknown authority")
    assert not any(method == "GET" and path.startswith("/api/v1/pods") for method, path in server.requests)
