"""``kubesched run``: schedule a real cluster through its API server (a drop-in for kube-scheduler)."""

from __future__ import annotations

import asyncio
import ssl
import sys
from typing import Callable, cast

import click

try:  # optional: not built for Windows
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None  # type: ignore[assignment]

from ..cluster.kube.app import RunSettings, StartupError, run_scheduler
from ..cluster.kube.connection import ConfigurationError, load_connection
from ..framework.config import ConfigError, LeaderElection, validate_config
from ..framework.extender_config import parse_go_duration
from .common import feature_gates_option, fail, load_config, plugin_option, registry
from .logs import configure_logging

__all__ = ["run"]

EXIT_STARTUP = 1


def _event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (Linux, macOS): the live mode's I/O costs
    less CPU on it; asyncio's own elsewhere."""
    if uvloop is None:
        return None
    return cast(Callable[[], asyncio.AbstractEventLoop], uvloop.new_event_loop)


def _flags(params: dict[str, object]) -> dict[str, str]:
    """The command line as /flagz shows it: every flag by its name, with its value."""
    shown: dict[str, str] = {}
    for name, value in params.items():
        flag = "v" if name == "verbosity" else "plugin" if name == "plugins" else name.replace("_", "-")
        if isinstance(value, tuple):
            value = ",".join(str(v) for v in value)
        shown[flag] = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return shown


def _bool(value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "t", "yes"):
        return True
    if lowered in ("false", "0", "f", "no"):
        return False
    raise click.BadParameter(f"want true or false, got {value!r}")


def _seconds(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = parse_go_duration(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None
    if seconds <= 0:
        raise click.BadParameter(f"want a positive duration such as 15s, got {value!r}")
    return seconds


def _level(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """klog's -v: ``-v 2``, ``-v2``, ``--v=2`` and the ``-v=2`` of kube-scheduler's manifests."""
    try:
        return int(str(value).lstrip("="))
    except ValueError:
        raise click.BadParameter(f"want a number, got {value!r}") from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A KubeSchedulerConfiguration (v1) file.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="Kubeconfig of the cluster; overrides clientConnection.kubeconfig. "
                   "Without either, in-cluster configuration is used.")
@click.option("--master", default=None, help="The API server's address; overrides the kubeconfig's.")
@click.option("--leader-elect", "leader_elect", default=None, is_flag=False, flag_value="true", metavar="[=BOOL]",
              help="Campaign for the Lease and schedule only while holding it (default true, as kube-scheduler).")
@click.option("--leader-elect-lease-duration", callback=_seconds, default=None, metavar="DURATION")
@click.option("--leader-elect-renew-deadline", callback=_seconds, default=None, metavar="DURATION")
@click.option("--leader-elect-retry-period", callback=_seconds, default=None, metavar="DURATION")
@click.option("--leader-elect-resource-name", default=None, help="The Lease's name (default kube-scheduler).")
@click.option("--leader-elect-resource-namespace", default=None, help="The Lease's namespace (default kube-system).")
@click.option("--bind-address", default="0.0.0.0", show_default=True, help="Address of the health and metrics endpoints.")
@click.option("--port", type=click.IntRange(0, 65535), default=10251, show_default=True,
              help="Plain HTTP port of /healthz, /livez, /readyz and /metrics (0: pick a free one).")
@click.option("--secure-port", type=click.IntRange(0, 65535), default=0,
              help="Serve the endpoints over HTTPS on this port instead (needs --tls-cert-file and --tls-private-key-file).")
@click.option("--tls-cert-file", type=click.Path(dir_okay=False), default=None)
@click.option("--tls-private-key-file", type=click.Path(dir_okay=False), default=None)
@click.option("--kube-api-qps", type=float, default=None, help="Client QPS; overrides clientConnection.qps (default 50).")
@click.option("--kube-api-burst", type=int, default=None, help="Client burst; overrides clientConnection.burst (default 100).")
@click.option("--startup-timeout", callback=_seconds, default="30s", show_default=True, metavar="DURATION",
              help="How long to wait for an API server that can't be reached yet before giving up.")
@click.option("-v", "--v", "verbosity", callback=_level, default="0", show_default=True, metavar="N",
              help="Log verbosity: 2 logs every scheduling decision, 4 debug.")
@plugin_option
@feature_gates_option
def run(config_file: str | None, kubeconfig: str | None, master: str | None, leader_elect: str | None,
        leader_elect_lease_duration: float | None, leader_elect_renew_deadline: float | None,
        leader_elect_retry_period: float | None, leader_elect_resource_name: str | None,
        leader_elect_resource_namespace: str | None, bind_address: str, port: int, secure_port: int,
        tls_cert_file: str | None, tls_private_key_file: str | None, kube_api_qps: float | None,
        kube_api_burst: int | None, startup_timeout: float, verbosity: int, plugins: tuple[str, ...], feature_gates: tuple[str, ...]) -> None:
    """Schedule the pending pods of a cluster through its API server.

    Serves every pod whose spec.schedulerName is one of the config's profiles
    (default-scheduler without a config): as the cluster's scheduler, or as a
    second one beside kube-scheduler.
    """
    configure_logging(verbosity)
    reg = registry(plugins, feature_gates)
    config = load_config(config_file, reg)
    le: LeaderElection = config.leader_election
    if leader_elect is not None:
        le.leader_elect = _bool(leader_elect)
    for value, attr in ((leader_elect_lease_duration, "lease_duration"), (leader_elect_renew_deadline, "renew_deadline"),
                        (leader_elect_retry_period, "retry_period"), (leader_elect_resource_name, "resource_name"),
                        (leader_elect_resource_namespace, "resource_namespace")):
        if value is not None:
            setattr(le, attr, value)
    problems = validate_config(config)  # the flags override the file: validated again, as upstream does
    if problems:
        fail(ConfigError(problems, "command line and " + (config_file or "defaults")).lines())
    qps = kube_api_qps if kube_api_qps is not None else config.qps
    burst = kube_api_burst if kube_api_burst is not None else config.burst
    try:
        connection = load_connection(kubeconfig or config.kubeconfig or None, master=master, qps=qps, burst=burst)
    except ConfigurationError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_STARTUP)
    tls = None
    serve_port = port
    if secure_port:
        if not (tls_cert_file and tls_private_key_file):
            raise click.BadParameter("--secure-port needs --tls-cert-file and --tls-private-key-file",
                                     param_hint="--secure-port")
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            tls.load_cert_chain(tls_cert_file, tls_private_key_file)
        except (OSError, ssl.SSLError) as err:
            click.echo(f"error: cannot load the serving certificate: {err}", err=True)
            sys.exit(EXIT_STARTUP)
        serve_port = secure_port
    settings = RunSettings(config, connection, reg, bind_address=bind_address, port=serve_port, tls=tls,
                           startup_timeout=startup_timeout, flags=_flags(click.get_current_context().params))
    try:
        with asyncio.Runner(loop_factory=_event_loop_factory()) as runner:
            code = runner.run(run_scheduler(settings))
    except StartupError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_STARTUP)
    except KeyboardInterrupt:  # pragma: no cover - a second Ctrl-C during shutdown
        code = 0
    sys.exit(code)
