"""`kubesched config`: show the effective configuration, check a file."""

from __future__ import annotations

import click
import yaml

from ..clock import VirtualClock
from ..cache.cache import Cache
from ..framework.config import ConfigError, SchedulerConfig
from ..framework.handle import FrameworkHandle
from ..framework.profile import build_profiles
from .common import fail, load_config, registry


@click.group("config")
def config_group() -> None:
    """Inspect KubeSchedulerConfiguration files."""


def _resolved(config: SchedulerConfig) -> dict:
    reg = registry()
    handle = FrameworkHandle(Cache(), VirtualClock())
    try:
        profiles = build_profiles(config, reg, handle)
    except ConfigError as err:
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
def show(config_file: str | None) -> None:
    """Print the plugins each profile runs at each extension point, with score weights.

    Without CONFIG_FILE, shows kubesched's defaults (upstream's default profile).
    """
    config = load_config(config_file, registry())
    click.echo(yaml.safe_dump(_resolved(config), sort_keys=False), nl=False)


@config_group.command("check")
@click.argument("config_file", type=click.Path(dir_okay=False))
def check(config_file: str) -> None:
    """Validate CONFIG_FILE; print every problem (exit 2) or "ok"."""
    config = load_config(config_file, registry())
    _resolved(config)
    click.echo(f"{config_file}: ok ({len(config.profiles)} profile(s))")
