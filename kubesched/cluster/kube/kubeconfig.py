"""Reading a kubeconfig, and the in-cluster service account, as client-go's ``clientcmd``
and ``rest.InClusterConfig`` do: what ``connection.load_connection`` builds a connection from.

A file of its own rather than the ``kubernetes`` package's loaders: importing those pulls
in the whole generated client, ``requests``, ``pydantic`` and ``google-auth``, a third of
``kubesched run``'s start-up, for a few dozen lines of YAML reading.

* Several files (``$KUBECONFIG`` with ``:``) merge as client-go merges them: the first
  file to define a cluster, user or context by name wins, and the first
  ``current-context`` set wins. Relative paths in a file are relative to that file.
* A context names a cluster (``server``, ``certificate-authority[-data]``,
  ``insecure-skip-tls-verify``, ``tls-server-name``) and a user (``token``,
  ``tokenFile``, ``username``/``password``, ``client-certificate[-data]`` and
  ``client-key[-data]``, or an ``exec`` credential plugin). ``auth-provider`` (the
  removed gcp/azure/oidc plugins) is refused: use their ``exec`` replacements.
* An exec plugin (``client.authentication.k8s.io/v1`` or ``v1beta1``) runs with
  ``KUBERNETES_EXEC_INFO`` set and prints an ``ExecCredential``; its token is used until
  its ``expirationTimestamp`` and the plugin runs again after that.
* In a pod: ``KUBERNETES_SERVICE_HOST``/``PORT``, the service account token (re-read
  every minute: the kubelet rotates projected tokens) and its CA.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import yaml  # type: ignore[import-untyped]  # (no stubs installed)

__all__ = [
    "ClientSettings",
    "KubeconfigError",
    "SERVICE_CERT_FILENAME",
    "SERVICE_TOKEN_FILENAME",
    "in_cluster_settings",
    "kubeconfig_settings",
]

SERVICE_HOST_ENV_NAME = "KUBERNETES_SERVICE_HOST"
SERVICE_PORT_ENV_NAME = "KUBERNETES_SERVICE_PORT"
SERVICE_TOKEN_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CERT_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
#: How long a service account token read from its file is used before reading it again.
TOKEN_FILE_PERIOD = 60.0
_EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")


class KubeconfigError(Exception):
    """The configuration cannot be used; the message says why, in one line."""


@dataclass(slots=True)
class ClientSettings:
    """What a kubeconfig context (or the service account) says about reaching the server."""

    server: str
    ca_file: str | None = None
    ca_data: bytes | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    cert_data: bytes | None = None
    key_data: bytes | None = None
    basic_auth: tuple[str, str] | None = None
    token: Callable[[], str | None] | None = None  # the current bearer token (refreshes itself)
    exec_certificates: Callable[[], tuple[bytes, bytes] | None] = field(default=lambda: None)


# -- files ---------------------------------------------------------------------------------
def _load(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as handle:
            doc = yaml.safe_load(handle)
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"YAML: {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise KubeconfigError(f"{exc.strerror or exc}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise KubeconfigError("not a kubeconfig (the document is not a map)")
    return doc


def _absolute(base: str, value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    path = os.path.expanduser(value)
    return path if os.path.isabs(path) else os.path.join(base, path)


def _named(doc: Mapping[str, object], section: str, inner: str, base: str,
           into: dict[str, tuple[dict[str, object], str]]) -> None:
    entries = doc.get(section) or []
    if not isinstance(entries, list):
        raise KubeconfigError(f"{section} must be a list")
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise KubeconfigError(f"an entry of {section} has no name")
        body = entry.get(inner) or {}
        if not isinstance(body, dict):
            raise KubeconfigError(f"{section} {entry['name']!r}: {inner} must be a map")
        into.setdefault(entry["name"], (body, base))  # the first file to define a name wins


def kubeconfig_settings(paths: list[str], context: str | None = None) -> ClientSettings:
    """The settings of ``context`` (else the current context) of the merged files."""
    clusters: dict[str, tuple[dict[str, object], str]] = {}
    users: dict[str, tuple[dict[str, object], str]] = {}
    contexts: dict[str, tuple[dict[str, object], str]] = {}
    current = ""
    for path in paths:
        doc = _load(path)
        base = os.path.dirname(os.path.abspath(path))
        _named(doc, "clusters", "cluster", base, clusters)
        _named(doc, "users", "user", base, users)
        _named(doc, "contexts", "context", base, contexts)
        if not current and isinstance(doc.get("current-context"), str):
            current = str(doc["current-context"])
    name = context or current
    if not name:
        raise KubeconfigError("no current-context is set and no context was given")
    if name not in contexts:
        raise KubeconfigError(f"context {name!r} not found")
    ctx = contexts[name][0]
    cluster_name, user_name = ctx.get("cluster"), ctx.get("user")
    if not isinstance(cluster_name, str) or cluster_name not in clusters:
        raise KubeconfigError(f"context {name!r}: cluster {cluster_name!r} not found")
    cluster, cluster_base = clusters[cluster_name]
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise KubeconfigError(f"cluster {cluster_name!r} has no server")
    settings = ClientSettings(server=server.rstrip("/"),
                              ca_file=_absolute(cluster_base, cluster.get("certificate-authority")),
                              ca_data=_data(cluster, "certificate-authority-data"),
                              insecure=bool(cluster.get("insecure-skip-tls-verify")),
                              tls_server_name=str(cluster.get("tls-server-name") or "") or None)
    if isinstance(user_name, str) and user_name:
        if user_name not in users:
            raise KubeconfigError(f"context {name!r}: user {user_name!r} not found")
        user, user_base = users[user_name]
        _user(settings, user, user_base, cluster)
    return settings


def _data(section: Mapping[str, object], key: str) -> bytes | None:
    value = section.get(key)
    if not value:
        return None
    try:
        return base64.b64decode(str(value), validate=False)
    except (binascii.Error, ValueError):
        raise KubeconfigError(f"{key} is not base64") from None


def _user(settings: ClientSettings, user: Mapping[str, object], base: str, cluster: Mapping[str, object]) -> None:
    if user.get("auth-provider"):
        raise KubeconfigError("auth-provider plugins are not supported; use the provider's exec plugin")
    settings.cert_file = _absolute(base, user.get("client-certificate"))
    settings.key_file = _absolute(base, user.get("client-key"))
    settings.cert_data = _data(user, "client-certificate-data")
    settings.key_data = _data(user, "client-key-data")
    token = user.get("token")
    token_file = _absolute(base, user.get("tokenFile"))
    if isinstance(token, str) and token:
        fixed = token.strip()
        settings.token = lambda: fixed
    elif token_file:
        settings.token = _FileToken(token_file).token
    elif isinstance(exec_spec := user.get("exec"), dict):
        plugin = _ExecPlugin(exec_spec, base, cluster)
        settings.token = plugin.token
        settings.exec_certificates = plugin.certificates
    if user.get("username") is not None and settings.token is None:
        settings.basic_auth = (str(user.get("username") or ""), str(user.get("password") or ""))


class _FileToken:
    """The token in a file, read again once ``TOKEN_FILE_PERIOD`` has passed (client-go's
    cached token file source: the kubelet rotates projected service account tokens)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._token = ""
        self._read_at = float("-inf")
        self.token()  # fail at load time, not at the first request

    def token(self) -> str | None:
        now = time.monotonic()
        if not self._token or now - self._read_at >= TOKEN_FILE_PERIOD:
            try:
                with open(self._path, encoding="utf-8") as handle:
                    self._token = handle.read().strip()
            except OSError as exc:
                if not self._token:
                    raise KubeconfigError(f"token file {self._path}: {exc.strerror or exc}") from None
            self._read_at = now
        return self._token or None


class _ExecPlugin:
    """A client-go credential plugin: run, read its ExecCredential, run again when expired."""

    def __init__(self, spec: Mapping[str, object], base: str, cluster: Mapping[str, object]) -> None:
        api_version = str(spec.get("apiVersion") or "")
        if api_version not in _EXEC_API_VERSIONS:
            raise KubeconfigError(f"exec plugin: unsupported apiVersion {api_version!r}")
        command = spec.get("command")
        if not isinstance(command, str) or not command:
            raise KubeconfigError("exec plugin: no command")
        if os.sep in command and not os.path.isabs(command):
            command = os.path.join(base, command)  # a relative path, relative to the kubeconfig
        args = spec.get("args") or []
        self._argv = [command, *(str(a) for a in args)] if isinstance(args, list) else [command]
        env = dict(os.environ)
        extra = spec.get("env")
        for item in extra if isinstance(extra, list) else ():
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                env[item["name"]] = str(item.get("value") or "")
        info: dict[str, object] = {"interactive": False}
        if spec.get("provideClusterInfo"):
            info["cluster"] = {k: v for k, v in (("server", cluster.get("server")),
                                                 ("certificate-authority-data", cluster.get("certificate-authority-data")),
                                                 ("tls-server-name", cluster.get("tls-server-name"))) if v}
        env["KUBERNETES_EXEC_INFO"] = json.dumps({"apiVersion": api_version, "kind": "ExecCredential", "spec": info})
        self._env = env
        self._token: str | None = None
        self._certificates: tuple[bytes, bytes] | None = None
        self._expires: float | None = None
        self._run()

    def _run(self) -> None:
        try:
            done = subprocess.run(self._argv, env=self._env, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise KubeconfigError(f"exec plugin {self._argv[0]}: {exc}") from None
        if done.returncode != 0:
            detail = " ".join(done.stderr.decode(errors="replace").split())[:300]
            raise KubeconfigError(f"exec plugin {self._argv[0]} exited with {done.returncode}: {detail}")
        try:
            status = json.loads(done.stdout).get("status") or {}
        except (ValueError, AttributeError):
            raise KubeconfigError(f"exec plugin {self._argv[0]}: its output is not an ExecCredential") from None
        token = status.get("token")
        self._token = str(token) if token else None
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        self._certificates = (str(cert).encode(), str(key).encode()) if cert and key else None
        expiry = status.get("expirationTimestamp")
        self._expires = _rfc3339(str(expiry)) if expiry else None
        if self._token is None and self._certificates is None:
            raise KubeconfigError(f"exec plugin {self._argv[0]}: the ExecCredential has neither token nor certificate")

    def token(self) -> str | None:
        if self._expires is not None and time.time() >= self._expires:
            self._run()
        return self._token

    def certificates(self) -> tuple[bytes, bytes] | None:
        return self._certificates


def _rfc3339(text: str) -> float:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise KubeconfigError(f"exec plugin: bad expirationTimestamp {text!r}") from None


def in_cluster_settings() -> ClientSettings:
    """The pod's service account: the API server's address from the environment, the
    token (read again every ``TOKEN_FILE_PERIOD``) and the cluster CA beside it."""
    host, port = os.environ.get(SERVICE_HOST_ENV_NAME), os.environ.get(SERVICE_PORT_ENV_NAME)
    if not host or not port:
        raise KubeconfigError("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
    if not os.path.isfile(SERVICE_TOKEN_FILENAME):
        raise KubeconfigError(f"no service account token at {SERVICE_TOKEN_FILENAME}")
    if not os.path.isfile(SERVICE_CERT_FILENAME):
        raise KubeconfigError(f"no service account CA at {SERVICE_CERT_FILENAME}")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    return ClientSettings(server=f"https://{host}:{port}", ca_file=SERVICE_CERT_FILENAME,
                          token=_FileToken(SERVICE_TOKEN_FILENAME).token)


def write_temporary(data: bytes) -> str:
    """A private temporary file holding ``data`` (``ssl`` loads certificates from files only)."""
    handle, path = tempfile.mkstemp(prefix="kubesched-", suffix=".pem")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    return path
