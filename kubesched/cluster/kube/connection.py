"""Where the API server is and how to authenticate: kubeconfig or in-cluster service account.

Parsing kubeconfig (contexts, merged ``$KUBECONFIG`` lists, client certificates, CA data,
exec credential plugins, token files, basic auth) is ``kubeconfig.py``'s, as client-go's
``clientcmd`` reads them. Only the outcome is kept: the server URL, an ``ssl.SSLContext``
and a token source (exec plugins re-run when their credential expires; token files,
the in-cluster one included, are re-read every minute, which picks up the kubelet's
rotation of projected service account tokens), asked at most once a second.

Choice of source, as kube-scheduler's ``--kubeconfig``/``--master`` (explicit flags win):
an explicit kubeconfig; else, when neither flag is given and ``KUBERNETES_SERVICE_HOST`` is
set, the in-cluster service account; else ``$KUBECONFIG`` or ``~/.kube/config``. ``master``
overrides the server of whichever kubeconfig is used; given alone with no kubeconfig file
available it yields an unauthenticated connection, as upstream's ``BuildConfigFromFlags``.
"""

from __future__ import annotations

import logging
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass

from kubesched import __version__

from . import kubeconfig as kubeconfig_files
from .kubeconfig import ClientSettings, KubeconfigError, write_temporary

__all__ = ["Connection", "ConfigurationError", "load_connection", "DEFAULT_USER_AGENT"]

log = logging.getLogger(__name__)

DEFAULT_USER_AGENT = f"kubesched/{__version__}"
REFRESH_INTERVAL = 1.0  # seconds between calls of the credential refresh hook


class ConfigurationError(Exception):
    """The connection cannot be configured; the message is one line naming the cause."""


@dataclass(frozen=True, slots=True)
class Connection:
    """Everything a request needs to reach and authenticate to the API server."""

    server: str  # "https://host:6443", no trailing slash
    ssl: ssl.SSLContext | None  # None for plain http
    token: Callable[[], str | None]  # current bearer token, refreshed by the source
    basic_auth: tuple[str, str] | None
    qps: float = 50.0  # kube-scheduler's clientConnection defaults
    burst: int = 100
    user_agent: str = DEFAULT_USER_AGENT
    tls_server_name: str | None = None  # kubeconfig ``tls-server-name``: SNI and verification name


def _no_token() -> str | None:
    return None


def load_connection(
    kubeconfig: str | None = None,
    *,
    context: str | None = None,
    master: str | None = None,
    qps: float = 50.0,
    burst: int = 100,
) -> Connection:
    """Resolve the connection as kube-scheduler does; ``ConfigurationError`` on any problem."""
    if kubeconfig:
        if not os.path.isfile(os.path.expanduser(kubeconfig)):
            raise ConfigurationError(f"kubeconfig {kubeconfig}: file does not exist")
        return _from_kubeconfig(os.path.expanduser(kubeconfig), context, master, qps, burst)
    if not master and os.environ.get(kubeconfig_files.SERVICE_HOST_ENV_NAME):
        return _in_cluster(qps, burst)
    paths = os.environ.get("KUBECONFIG") or os.path.join("~", ".kube", "config")
    present = [p for p in paths.split(os.pathsep) if p and os.path.isfile(os.path.expanduser(p))]
    if present:
        return _from_kubeconfig(os.pathsep.join(present), context, master, qps, burst)
    if master:
        return _bare(master, qps, burst)
    raise ConfigurationError(
        "no kubeconfig found (looked at " + paths + "); pass --kubeconfig or --master, or run in a cluster"
    )


def _from_kubeconfig(path: str, context: str | None, master: str | None, qps: float, burst: int) -> Connection:
    try:
        settings = kubeconfig_files.kubeconfig_settings([p for p in path.split(os.pathsep) if p], context)
    except KubeconfigError as exc:
        raise ConfigurationError(f"kubeconfig {path}: {_one_line(exc)}") from None
    if master:
        settings.server = master.rstrip("/")
    return _connection(settings, qps, burst, source=f"kubeconfig {path}")


def _in_cluster(qps: float, burst: int) -> Connection:
    try:
        settings = kubeconfig_files.in_cluster_settings()
    except KubeconfigError as exc:
        raise ConfigurationError(f"in-cluster configuration: {_one_line(exc)}") from None
    return _connection(settings, qps, burst, source="in-cluster configuration")


def _bare(master: str, qps: float, burst: int) -> Connection:
    server = master.rstrip("/")
    context = ssl.create_default_context() if server.startswith("https") else None
    return Connection(server=server, ssl=context, token=_no_token, basic_auth=None, qps=qps, burst=burst)


def _connection(settings: ClientSettings, qps: float, burst: int, *, source: str) -> Connection:
    server = settings.server.rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise ConfigurationError(f"{source}: server {server!r} is not an http(s) URL")
    context = _ssl_context(settings, source) if server.startswith("https://") else None
    token = _token_source(settings.token, source) if settings.token is not None else _no_token
    return Connection(server=server, ssl=context, token=token, basic_auth=settings.basic_auth, qps=qps,
                      burst=burst, tls_server_name=settings.tls_server_name)


def _ssl_context(settings: ClientSettings, source: str) -> ssl.SSLContext:
    temporary: list[str] = []
    try:
        if settings.insecure:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif settings.ca_data is not None:
            context = ssl.create_default_context(cadata=settings.ca_data.decode("ascii", errors="replace"))
        else:
            context = ssl.create_default_context(cafile=settings.ca_file or None)
        cert, key = settings.cert_file, settings.key_file
        pair = ((settings.cert_data, settings.key_data) if settings.cert_data is not None
                else settings.exec_certificates())
        if pair is not None and pair[0] is not None:
            cert = write_temporary(pair[0])
            temporary.append(cert)
            if pair[1] is not None:
                key = write_temporary(pair[1])
                temporary.append(key)
        if cert:
            context.load_cert_chain(cert, key or None)
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise ConfigurationError(f"{source}: TLS material: {_one_line(exc)}") from None
    finally:
        for path in temporary:  # the key is in the context now: no copy left on disk
            os.unlink(path)
    return context


def _token_source(source_token: Callable[[], str | None], source: str) -> Callable[[], str | None]:
    """The bearer token, asked of its source at most once a second.

    The source re-runs an expired exec plugin or re-reads a token file; even when nothing
    expired it costs too much to pay on every request. A failing refresh keeps the last token."""
    state: list[str | None] = [None]
    last = [-REFRESH_INTERVAL]

    def token() -> str | None:
        now = time.monotonic()
        if now - last[0] < REFRESH_INTERVAL:
            return state[0]
        try:
            state[0] = _bearer(source_token())
        except Exception as exc:  # a failing exec plugin: keep using the last token
            log.warning("refreshing the API credential of %s failed: %s", source, _one_line(exc))
        last[0] = now
        return state[0]

    return token


def _bearer(value: object) -> str | None:
    if not value:
        return None
    text = str(value).strip()
    if text[:7].lower() == "bearer ":
        text = text[7:].strip()
    return text or None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
