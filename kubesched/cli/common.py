"""What the commands share: reading the config, reporting bad input in one line each, exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from ..framework.config import ConfigError, SchedulerConfig, default_config
from ..framework.features import FeatureGateError, Features, parse_feature_gates
from ..framework.config import load_config as read_config_file
from ..framework.loader import PluginLoadError, load_plugins
from ..framework.registry import Registry
from ..plugins.registry import in_tree_registry

__all__ = ["EXIT_BAD_INPUT", "check_writable", "fail", "load_config", "output_directory", "registry", "plugin_option",
           "feature_gates_option"]

EXIT_BAD_INPUT = 2


def fail(lines: list[str]) -> NoReturn:
    """Print each problem on its own line to stderr and exit 2."""
    for line in lines:
        click.echo(f"error: {line}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def check_writable(path: str) -> None:
    """Before anything runs: an output file that cannot be written fails now, not after the run."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        fail([f"{path}: is a directory"])
    if not parent.is_dir():
        fail([f"{path}: no such directory: {parent}"])
    if not os.access(target if target.exists() else parent, os.W_OK):
        fail([f"{path}: permission denied"])


def output_directory(directory: str) -> Path:
    """``directory``, created if need be; one that cannot be made exits 2."""
    path = Path(directory)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail([f"{directory}: {err.strerror or err}"])
    return path


def registry(plugins: tuple[str, ...] | list[str] = (), feature_gates: tuple[str, ...] | list[str] = ()) -> Registry:
    """The in-tree plugins, installed out-of-tree plugins (entry points) and ``--plugin`` ones,
    with the default profile and plugins' gates from ``--feature-gates``; a plugin that does
    not load, or a gate kube-scheduler would refuse, exits 2 with one line per problem."""
    try:
        features = Features.from_gates(parse_feature_gates(list(feature_gates)))
    except FeatureGateError as err:
        fail([str(err)])
    try:
        return load_plugins(in_tree_registry(features), plugins)
    except PluginLoadError as err:
        fail(err.lines)


plugin_option = click.option(
    "--plugin", "plugins", multiple=True, metavar="MODULE:ATTRIBUTE",
    help="Load an out-of-tree plugin (a PluginSpec, or a list of them); repeatable. "
         "Installed plugins (entry point group kubesched.plugins) load without it.",
)


feature_gates_option = click.option(
    "--feature-gates", "feature_gates", multiple=True, metavar="KEY=BOOL,...",
    help="kube-scheduler's feature gates (e.g. DRAExtendedResource=false), at v1.36's defaults otherwise; "
         "an unknown gate is an error. docs/dra.md lists the gates that change decisions.",
)


def load_config(path: str | None, reg: Registry) -> SchedulerConfig:
    """The KubeSchedulerConfiguration at ``path`` (defaults when None); bad input exits 2,
    one line per problem (not UTF-8, not YAML, a key set twice, strict decoding, validation)."""
    try:
        config = default_config(reg) if path is None else read_config_file(path, reg)
    except ConfigError as err:
        fail(err.lines())
    for line in reg.broken_warnings():  # installed packages that failed to load, but the config does not need
        click.echo(line, err=True)
    return config
