"""Subcommands imported when they run, not when ``kubesched`` starts.

Every subcommand pulls in its own world (the simulator and numpy, the Kubernetes
client, planning, replay, Dask's glue): importing them all up front made
``kubesched --version`` and ``--help`` take over a second and ``kubesched run`` pay
for planning and replay it never uses. :class:`LazyGroup` (click's documented
lazy-loading pattern) knows each subcommand by its module's name and the short help
``--help`` lists, and imports the module only when the subcommand is looked up to run
(or to show its own ``--help``). ``tests/cli/test_lazy_startup.py`` keeps the short
help here equal to each command's real one.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

__all__ = ["LazyGroup", "Subcommand", "summary_short_help"]


def summary_short_help(summary: str, limit: int) -> str:
    """The short help click would show for a command whose help is ``summary``: through a bare
    ``click.Command``, whose shortening is public API (click 8.5 deprecated the helper itself)."""
    return click.Command(None, help=summary).get_short_help_str(limit)


@dataclass(frozen=True, slots=True)
class Subcommand:
    """Where a subcommand lives, and what ``--help`` says about it without importing it."""

    module: str  # absolute module name
    attribute: str  # the click.Command in it
    summary: str  # the first sentence of its help: --help shortens it as click would


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic collector off while a subcommand's modules load, and what they built
    frozen after: modules, classes and functions live as long as the process, so each pass
    over them is wasted (a tenth of `kubesched run`'s import CPU), during the import and in
    every full collection after it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


class LazyGroup(click.Group):
    """A click group whose listed subcommands are imported on first use."""

    def __init__(self, *args: Any, lazy_subcommands: Mapping[str, Subcommand] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands: dict[str, Subcommand] = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_subcommands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self.lazy_subcommands:
            command = self.load(cmd_name)
        return command

    def load(self, name: str) -> click.Command:
        """Import subcommand ``name`` and keep it, as if it had been added up front."""
        entry = self.lazy_subcommands[name]
        with _collector_paused():
            module = importlib.import_module(entry.module)
        command = getattr(module, entry.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{entry.module}.{entry.attribute} is not a click command")
        self.add_command(command, name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, as click writes it, from the summaries: nothing is imported."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None:
                if loaded.hidden:
                    continue
                rows.append((name, loaded.get_short_help_str(limit)))
            else:
                rows.append((name, summary_short_help(self.lazy_subcommands[name].summary, limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
