"""The ``kubesched`` command."""

from __future__ import annotations

import click

from .. import __version__
from .lazy import LazyGroup, Subcommand

# Each subcommand is imported when it runs (see lazy.py): --version and --help import none.
# The summaries are the first sentence of each command's help (tests/cli/test_lazy_startup.py).
SUBCOMMANDS: dict[str, Subcommand] = {
    "simulate": Subcommand(
        "kubesched.cli.simulate", "simulate",
        "Schedule the pending pods of SNAPSHOT (a file or directory of YAML/JSON as `kubectl get nodes,pods,...",
    ),
    "config": Subcommand("kubesched.cli.config_cmd", "config_group", "Inspect KubeSchedulerConfiguration files."),
    "run": Subcommand("kubesched.cli.run", "run", "Schedule the pending pods of a cluster through its API server."),
    "capacity": Subcommand(
        "kubesched.cli.capacity_cmd", "capacity",
        "How many more replicas of each pod spec fit in SNAPSHOT, placed as the scheduler places them.",
    ),
    "compare": Subcommand(
        "kubesched.cli.compare_cmd", "compare",
        "Schedule the pending pods of SNAPSHOT under each --config and compare: pods placed elsewhere or not at all, "
        "utilisation and fragmentation per configuration.",
    ),
    "replay": Subcommand(
        "kubesched.cli.replay_cmd", "replay",
        "Replay the pods of PODS on the nodes of NODES and report GPU allocation and fragmentation.",
    ),
    "sweep": Subcommand(
        "kubesched.cli.sweep_cmd", "sweep_command",
        "Run a grid of replays (policies x seeds x arrival levels x pod lists) or of comparisons (configurations x "
        "seeds x snapshots) in parallel, on local processes or a Dask cluster, and report them in one table "
        "(mean ± std over seeds); see docs/sweep.md.",
    ),
}


@click.group(cls=LazyGroup, lazy_subcommands=SUBCOMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubesched")
def cli() -> None:
    """kubesched: the Kubernetes scheduler in Python.

    Start with `kubesched simulate SNAPSHOT`: where would the pending pods of a
    cluster snapshot go, and why not?
    """


def main() -> None:
    cli()


if __name__ == "__main__":  # pragma: no cover
    main()
