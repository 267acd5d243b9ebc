"""load_connection: kubeconfig (tokens, client certificates, exec plugins, contexts), in-cluster
configuration, and one-line errors for every broken configuration."""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import json
import ssl
import sys
from pathlib import Path

import pytest
from aiohttp import web
from kubernetes.config import incluster_config

from kubesched.cluster.kube import connection
from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import ConfigurationError, load_connection

x509 = pytest.importorskip("cryptography.x509")
hashes = pytest.importorskip("cryptography.hazmat.primitives.hashes")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
NameOID = x509.oid.NameOID


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests see only the configuration they create."""
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))


def _kubeconfig(tmp_path: Path, users: list[dict[str, object]], *, server: str = "http://127.0.0.1:8080",
                cluster: dict[str, object] | None = None, name: str = "config") -> Path:
    contexts = [{"name": f"ctx-{u['name']}", "context": {"cluster": "c", "user": u["name"]}} for u in users]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": users,
        "contexts": contexts,
        "current-context": contexts[0]["name"],
    }
    path = tmp_path / name
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def test_kubeconfig_token_user_gives_server_and_bearer_token(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"token": "s3cret"}}])
    conn = load_connection(str(path))
    assert conn.server == "http://127.0.0.1:8080"
    assert conn.ssl is None
    assert conn.token() == "s3cret"
    assert conn.basic_auth is None
    assert (conn.qps, conn.burst) == (50.0, 100)
    assert conn.user_agent.startswith("kubesched/")


def test_context_selects_the_user(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, [{"name": "a", "user": {"token": "ta"}}, {"name": "b", "user": {"token": "tb"}}])
    assert load_connection(str(path)).token() == "ta"
    assert load_connection(str(path), context="ctx-b").token() == "tb"


def test_token_file_user(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("from-file")
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"tokenFile": str(tmp_path / "tok")}}])
    assert load_connection(str(path)).token() == "from-file"


def test_basic_auth_user(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"username": "admin", "password": "pw:x"}}])
    conn = load_connection(str(path))
    assert conn.basic_auth == ("admin", "pw:x")
    assert conn.token() is None


def test_exec_plugin_token(tmp_path: Path) -> None:
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        " 'status': {'token': 'exec-token'}}))\n"
    )
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    path = _kubeconfig(tmp_path, [{"name": "u", "user": user}])
    assert load_connection(str(path)).token() == "exec-token"


def test_master_overrides_the_kubeconfig_server(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"token": "t"}}])
    assert load_connection(str(path), master="http://10.0.0.1:8080/").server == "http://10.0.0.1:8080"


def test_qps_and_burst_are_carried(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"token": "t"}}])
    conn = load_connection(str(path), qps=5.0, burst=7)
    assert (conn.qps, conn.burst) == (5.0, 7)


def test_kubeconfig_environment_variable_is_used_without_a_flag(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"token": "env"}}])
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert load_connection().token() == "env"


def test_missing_kubeconfig_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_connection(str(tmp_path / "nope"))
    assert "does not exist" in str(info.value) and "\n" not in str(info.value)


def test_malformed_kubeconfig_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "bad"
    path.write_text("clusters: [\n  - {name: c\n")
    with pytest.raises(ConfigurationError) as info:
        load_connection(str(path))
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_unknown_context_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    path = _kubeconfig(tmp_path, [{"name": "u", "user": {"token": "t"}}])
    with pytest.raises(ConfigurationError) as info:
        load_connection(str(path), context="nowhere")
    assert "nowhere" in str(info.value) and "\n" not in str(info.value)


def test_no_configuration_at_all_is_an_error() -> None:
    with pytest.raises(ConfigurationError, match="no kubeconfig"):
        load_connection()


# --- in-cluster ---------------------------------------------------------------------------------


@pytest.fixture()
def service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pki = _pki(tmp_path)
    (tmp_path / "token").write_text("sa-token")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(tmp_path / "token"))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(pki["ca"]))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    return tmp_path


def test_in_cluster_configuration_when_no_kubeconfig_is_given(service_account: Path) -> None:
    conn = load_connection()
    assert conn.server == "https://10.96.0.1:443"
    assert conn.token() == "sa-token"
    assert isinstance(conn.ssl, ssl.SSLContext) and conn.ssl.verify_mode == ssl.CERT_REQUIRED


def test_in_cluster_token_is_reread_after_rotation(service_account: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "REFRESH_INTERVAL", 0.0)  # no one-second token cache
    conn = load_connection()
    assert conn.token() == "sa-token"
    (service_account / "token").write_text("rotated-token")

    class _Later:  # the loader's clock, two minutes on: past its one-minute refresh period
        timedelta = datetime.timedelta

        class datetime:  # noqa: N801 - stands in for datetime.datetime
            @staticmethod
            def now() -> datetime.datetime:
                return datetime.datetime.now() + datetime.timedelta(minutes=2)

    monkeypatch.setattr(incluster_config, "datetime", _Later)
    assert conn.token() == "rotated-token"


def test_expired_exec_credentials_are_refreshed_at_most_once_a_second(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, pathlib\n"
        f"runs = pathlib.Path({str(runs)!r})\n"
        "runs.write_text(runs.read_text() + 'x' if runs.exists() else 'x')\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        " 'status': {'token': 'run-' + str(len(runs.read_text())),"
        " 'expirationTimestamp': '2000-01-01T00:00:00Z'}}))\n"
    )
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    conn = load_connection(str(_kubeconfig(tmp_path, [{"name": "u", "user": user}])))
    first = conn.token()  # the credential is already expired: the plugin runs again
    assert first == "run-2"
    assert [conn.token() for _ in range(5)] == [first] * 5  # within the second: no further runs
    assert runs.read_text() == "xx"


def test_explicit_kubeconfig_wins_over_in_cluster(service_account: Path) -> None:
    path = _kubeconfig(service_account, [{"name": "u", "user": {"token": "explicit"}}])
    conn = load_connection(str(path))
    assert conn.server == "http://127.0.0.1:8080" and conn.token() == "explicit"


def test_in_cluster_without_token_file_is_a_one_line_error(service_account: Path) -> None:
    (service_account / "token").unlink()
    with pytest.raises(ConfigurationError, match="in-cluster") as info:
        load_connection()
    assert "\n" not in str(info.value)


# --- TLS end to end -----------------------------------------------------------------------------


def _pki(tmp_path: Path) -> dict[str, Path]:
    """A CA, a server certificate for 127.0.0.1 and a client certificate (CN=scheduler-user)."""
    now = datetime.datetime.now(datetime.timezone.utc)

    def make(cn: str, issuer_key: object, issuer_name: object, *, ca: bool, server: bool = False):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
        builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name or name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1))
                   .not_valid_after(now + datetime.timedelta(hours=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        cert = builder.sign(issuer_key or key, hashes.SHA256())
        return key, cert

    ca_key, ca_cert = make("test-ca", None, None, ca=True)
    server_key, server_cert = make("apiserver", ca_key, ca_cert.subject, ca=False, server=True)
    client_key, client_cert = make("scheduler-user", ca_key, ca_cert.subject, ca=False)
    files: dict[str, Path] = {}
    for label, obj in (("ca", ca_cert), ("server", server_cert), ("client", client_cert)):
        files[label] = tmp_path / f"{label}.crt"
        files[label].write_bytes(obj.public_bytes(serialization.Encoding.PEM))
    for label, key in (("server-key", server_key), ("client-key", client_key)):
        files[label] = tmp_path / f"{label}.pem"
        files[label].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                   serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()))
    return files


def test_client_certificates_and_ca_data_authenticate_over_tls(tmp_path: Path) -> None:
    pki = _pki(tmp_path)
    b64 = lambda p: base64.b64encode(p.read_bytes()).decode()  # noqa: E731

    async def scenario() -> tuple[dict[str, object], str]:
        seen: list[str] = []

        async def namespaces(request: web.Request) -> web.Response:
            peer = request.transport.get_extra_info("peercert") if request.transport else None
            subject = dict(item[0] for item in peer["subject"]) if peer else {}
            seen.append(str(subject.get("commonName", "")))
            return web.json_response({"kind": "NamespaceList", "items": []})

        app = web.Application()
        app.router.add_get("/api/v1/namespaces", namespaces)
        server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(pki["ca"]))
        server_ctx.load_cert_chain(pki["server"], pki["server-key"])
        server_ctx.verify_mode = ssl.CERT_REQUIRED
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        path = _kubeconfig(tmp_path, [{"name": "u", "user": {"client-certificate-data": b64(pki["client"]),
                                                              "client-key-data": b64(pki["client-key"])}}],
                           server=f"https://127.0.0.1:{port}",
                           cluster={"certificate-authority-data": b64(pki["ca"])})
        try:
            async with ApiClient(load_connection(str(path))) as client:
                answer = await client.request("GET", "/api/v1/namespaces")
        finally:
            await runner.cleanup()
        return answer, seen[0]

    answer, common_name = asyncio.run(scenario())
    assert answer["kind"] == "NamespaceList"
    assert common_name == "scheduler-user"
