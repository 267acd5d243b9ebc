"""`kubesched config`: show the effective configuration, check a file."""

from __future__ import annotations

import click
import yaml

from ..clock import VirtualClock
from ..cache.cache import Cache
from ..framework.config import ConfigError, SchedulerConfig, versioned_config
from ..framework.profile import build_profiles
from ..scheduler.handle import HandleHub
from ..framework.registry import Registry
from .common import fail, feature_gates_option, load_config, plugin_option, registry


@click.group("config")
def config_group() -> None:
    """Inspect KubeSchedulerConfiguration files."""


def _resolved(config: SchedulerConfig, reg: Registry, source: str | None = None) -> dict:
    hub = HandleHub(Cache(), VirtualClock(), None)
    hub.features = reg.features
    try:
        profiles = build_profiles(config, reg, hub.handle)
    except ConfigError as err:
        err.source = err.source or (source or "")
        fail(err.lines())
    return {
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": int(config.pod_initial_backoff_seconds),
        "podMaxBackoffSeconds": int(config.pod_max_backoff_seconds),
        "profiles": [
            {"schedulerName": name, "plugins": fwk.list_plugins()} for name, fwk in profiles.items()
        ],
    }


@config_group.command("show")
@click.argument("config_file", required=False, type=click.Path(dir_okay=False))
@click.option("--extension-points", "resolved", is_flag=True,
              help="Print the plugins each profile runs at each extension point, with score weights, instead.")
@plugin_option
@feature_gates_option
def show(config_file: str | None, resolved: bool, plugins: tuple[str, ...], feature_gates: tuple[str, ...]) -> None:
    """Print the fully defaulted configuration, as kube-scheduler's --write-config-to writes it.

    Without CONFIG_FILE, shows the defaults (upstream's default profile).
    """
    reg = registry(plugins, feature_gates)
    config = load_config(config_file, reg)
    resolved_plugins = _resolved(config, reg, config_file)  # also checks that every profile builds
    doc = resolved_plugins if resolved else versioned_config(config)
    click.echo(yaml.safe_dump(doc, sort_keys=not resolved), nl=False)


@config_group.command("check")
@click.argument("config_file", type=click.Path(dir_okay=False))
@plugin_option
@feature_gates_option
def check(config_file: str, plugins: tuple[str, ...], feature_gates: tuple[str, ...]) -> None:
    """Validate CONFIG_FILE; print every problem (exit 2) or "ok"."""
    reg = registry(plugins, feature_gates)
    config = load_config(config_file, reg)
    _resolved(config, reg, config_file)
    click.echo(f"{config_file}: ok ({len(config.profiles)} profile(s))")
