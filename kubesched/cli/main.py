"""The ``kubesched`` command."""

from __future__ import annotations

import click

from .. import __version__
from .capacity_cmd import capacity
from .compare_cmd import compare
from .config_cmd import config_group
from .replay_cmd import replay
from .run import run
from .simulate import simulate
from .sweep_cmd import sweep_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubesched")
def cli() -> None:
    """kubesched: the Kubernetes scheduler in Python.

    Start with `kubesched simulate SNAPSHOT`: where would the pending pods of a
    cluster snapshot go, and why not?
    """


cli.add_command(simulate)
cli.add_command(config_group)
cli.add_command(run)
cli.add_command(capacity)
cli.add_command(compare)
cli.add_command(replay)
cli.add_command(sweep_command)


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
