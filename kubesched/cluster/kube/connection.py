"""Where the API server is and how to authenticate: kubeconfig or in-cluster service account.

Parsing kubeconfig (contexts, merged ``$KUBECONFIG`` lists, client certificates, CA data,
exec credential plugins, token files, basic auth) is delegated to the official
``kubernetes`` package's loaders, so kubesched accepts exactly the files kubectl users have.
Only the outcome is kept: the server URL, an ``ssl.SSLContext`` and a token source that
re-runs the loader's refresh hook (exec plugins re-run when their credential expires; the
in-cluster token file is re-read every minute, which picks up the kubelet's rotation of
projected service account tokens).

Choice of source, as kube-scheduler's ``--kubeconfig``/``--master`` (explicit flags win):
an explicit kubeconfig; else, when neither flag is given and ``KUBERNETES_SERVICE_HOST`` is
set, the in-cluster service account; else ``$KUBECONFIG`` or ``~/.kube/config``. ``master``
overrides the server of whichever kubeconfig is used; given alone with no kubeconfig file
available it yields an unauthenticated connection, as upstream's ``BuildConfigFromFlags``.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import logging
import os
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from kubesched import __version__

if TYPE_CHECKING:  # the package is imported by name when a configuration is loaded (_kubernetes)
    from kubernetes.client import Configuration

__all__ = ["Connection", "ConfigurationError", "load_connection", "DEFAULT_USER_AGENT"]

log = logging.getLogger(__name__)

DEFAULT_USER_AGENT = f"kubesched/{__version__}"
_TOKEN_KEY = "BearerToken"
REFRESH_INTERVAL = 1.0  # seconds between calls of the credential refresh hook


_SERVICE_HOST_ENV = "KUBERNETES_SERVICE_HOST"  # incluster_config.SERVICE_HOST_ENV_NAME


def _kubernetes(module: str) -> Any:
    """One of the official client's configuration modules (``kube_config``,
    ``incluster_config``, ``config_exception``), imported on first use: importing the
    package costs about 0.3 s of CPU (requests, urllib3, oauthlib, pydantic), paid only by
    a process that loads a kubeconfig or the in-cluster configuration."""
    return importlib.import_module(f"kubernetes.config.{module}")


def _new_configuration() -> Configuration:
    """A fresh Configuration, not a copy of the process default."""
    configuration = importlib.import_module("kubernetes.client.configuration").Configuration
    return cast("Configuration", type.__call__(configuration))


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
    if not master and os.environ.get(_SERVICE_HOST_ENV):
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
    cfg = _new_configuration()
    config_exception = _kubernetes("config_exception").ConfigException
    try:
        _kubernetes("kube_config").load_kube_config(
            config_file=path, context=context, client_configuration=cfg, persist_config=False)
    except config_exception as exc:
        if context is not None and f"name {context} in" in str(exc):
            raise ConfigurationError(f"kubeconfig {path}: context {context!r} not found") from None
        raise ConfigurationError(f"kubeconfig {path}: {_one_line(exc)}") from None
    except Exception as exc:  # YAML syntax errors, unreadable files, malformed entries
        raise ConfigurationError(f"kubeconfig {path}: {type(exc).__name__}: {_one_line(exc)}") from None
    if master:
        cfg.host = master.rstrip("/")
    return _connection(cfg, qps, burst, source=f"kubeconfig {path}")


def _in_cluster(qps: float, burst: int) -> Connection:
    # The module attributes are read at call time so tests can point them at temporary files.
    incluster_config = _kubernetes("incluster_config")
    loader = incluster_config.InClusterConfigLoader(
        token_filename=incluster_config.SERVICE_TOKEN_FILENAME,
        cert_filename=incluster_config.SERVICE_CERT_FILENAME,
        try_refresh_token=True,
    )
    cfg = _new_configuration()
    try:
        loader.load_and_set(cfg)
    except _kubernetes("config_exception").ConfigException as exc:
        raise ConfigurationError(f"in-cluster configuration: {_one_line(exc)}") from None
    except OSError as exc:
        raise ConfigurationError(f"in-cluster configuration: {_one_line(exc)}") from None
    return _connection(cfg, qps, burst, source="in-cluster configuration")


def _bare(master: str, qps: float, burst: int) -> Connection:
    server = master.rstrip("/")
    context = ssl.create_default_context() if server.startswith("https") else None
    return Connection(server=server, ssl=context, token=_no_token, basic_auth=None, qps=qps, burst=burst)


def _connection(cfg: Configuration, qps: float, burst: int, *, source: str) -> Connection:
    server = str(cfg.host or "").rstrip("/")
    if not server.startswith(("http://", "https://")):
        raise ConfigurationError(f"{source}: server {server!r} is not an http(s) URL")
    context = _ssl_context(cfg, source) if server.startswith("https://") else None
    basic_auth: tuple[str, str] | None = None
    token: Callable[[], str | None] = _no_token
    initial = cfg.api_key.get(_TOKEN_KEY)
    if isinstance(initial, str) and initial[:6].lower() == "basic ":
        basic_auth = _decode_basic(initial[6:], source)
    elif initial or cfg.refresh_api_key_hook is not None:
        token = _token_source(cfg)
    return Connection(server=server, ssl=context, token=token, basic_auth=basic_auth, qps=qps, burst=burst,
                      tls_server_name=getattr(cfg, "tls_server_name", None) or None)


def _ssl_context(cfg: Configuration, source: str) -> ssl.SSLContext:
    try:
        if cfg.verify_ssl:
            context = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
        else:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if cfg.cert_file:
            context.load_cert_chain(cfg.cert_file, cfg.key_file or None)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigurationError(f"{source}: TLS material: {_one_line(exc)}") from None
    return context


def _token_source(cfg: Configuration) -> Callable[[], str | None]:
    """The bearer token, refreshed through the loader's hook at most once a second.

    The hook re-runs an expired exec plugin or re-reads the service account token; it
    costs tens of microseconds even when nothing expired, too much to pay on every request.
    """
    hook = cfg.refresh_api_key_hook
    state: list[object] = [None, -REFRESH_INTERVAL]  # token, monotonic time of the last refresh

    def token() -> str | None:
        now = time.monotonic()
        if now - cast(float, state[1]) < REFRESH_INTERVAL:
            return cast("str | None", state[0])
        if hook is not None:
            try:
                hook(cfg)
            except Exception as exc:  # a failing exec plugin: keep using the last token
                log.warning("refreshing the API credential failed: %s", _one_line(exc))
        state[0] = _bearer(cfg.api_key.get(_TOKEN_KEY))
        state[1] = now
        return cast("str | None", state[0])

    return token


def _bearer(value: object) -> str | None:
    if not value:
        return None
    text = str(value).strip()
    if text[:7].lower() == "bearer ":
        text = text[7:].strip()
    return text or None


def _decode_basic(encoded: str, source: str) -> tuple[str, str]:
    try:
        user, _, password = base64.b64decode(encoded.strip()).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise ConfigurationError(f"{source}: malformed username/password") from None
    return user, password


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
