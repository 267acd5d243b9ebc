"""What the commands share: reading the config, reporting bad input in one line each, exit codes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click
import yaml

from ..framework.config import ConfigError, SchedulerConfig, default_config, parse_config
from ..framework.loader import PluginLoadError, load_plugins
from ..framework.registry import Registry
from ..plugins.registry import in_tree_registry

__all__ = ["EXIT_BAD_INPUT", "fail", "load_config", "registry", "plugin_option"]

EXIT_BAD_INPUT = 2


def fail(lines: list[str]) -> NoReturn:
    """Print each problem on its own line to stderr and exit 2."""
    for line in lines:
        click.echo(f"error: {line}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def registry(plugins: tuple[str, ...] | list[str] = ()) -> Registry:
    """The in-tree plugins, installed out-of-tree plugins (entry points) and ``--plugin`` ones;
    a plugin that does not load exits 2 with one line per problem."""
    try:
        return load_plugins(in_tree_registry(), plugins)
    except PluginLoadError as err:
        fail(err.lines)


plugin_option = click.option(
    "--plugin", "plugins", multiple=True, metavar="MODULE:ATTRIBUTE",
    help="Load an out-of-tree plugin (a PluginSpec, or a list of them); repeatable. "
         "Installed plugins (entry point group kubesched.plugins) load without it.",
)


def load_config(path: str | None, reg: Registry) -> SchedulerConfig:
    """The KubeSchedulerConfiguration at ``path`` (defaults when None); bad input exits 2."""
    if path is None:
        return default_config(reg)
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as err:
        fail([f"{path}: {err.strerror or err}"])
    except UnicodeDecodeError as err:
        fail([f"{path}: not UTF-8 text (byte {err.start})"])
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        fail([f"{path}: invalid YAML{where}: {getattr(err, 'problem', None) or err}"])
    if len(docs) != 1:
        fail([f"{path}: want exactly one KubeSchedulerConfiguration document, found {len(docs)}"])
    try:
        return parse_config(docs[0], reg, source=str(path))
    except ConfigError as err:
        err.source = str(path)
        fail(err.lines())
