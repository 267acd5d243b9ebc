"""`kubesched --version` and `--help` import no subcommand; a subcommand imports only its own modules.

Checked on what a fresh interpreter has imported when the command exits (its
``sys.modules``), not on timings."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kubesched.cli.lazy import summary_short_help
from kubesched.cli.main import SUBCOMMANDS, cli

# What no subcommand-free invocation may pay for: the simulator and its numpy, the
# Kubernetes client, planning, replay, sweeps, the terminal UI, YAML.
HEAVY = ("numpy", "kubernetes", "rich", "yaml", "matplotlib", "dask",
         "kubesched.framework", "kubesched.cluster", "kubesched.planning", "kubesched.replay", "kubesched.sweep")


# `kubesched ARGS` as the console script runs it, then the modules it imported, written to a file.
PROBE = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from kubesched.cli.main import main
main()
"""


def imported_modules(tmp_path: Path, *args: str) -> set[str]:
    """The modules a fresh ``kubesched ARGS`` has imported when it exits."""
    out = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(json.loads(out.read_text()))


def heavy(modules: set[str], names: tuple[str, ...] = HEAVY) -> set[str]:
    return {m for m in modules if any(m == n or m.startswith(n + ".") for n in names)}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"]], ids=" ".join)
def test_version_and_help_import_no_subcommand(tmp_path: Path, args: list[str]) -> None:
    modules = imported_modules(tmp_path, *args)
    assert "kubesched.cli.main" in modules
    assert heavy(modules) == set()
    assert not {m for m in modules if m.startswith("kubesched.cli.") and m not in ("kubesched.cli.main", "kubesched.cli.lazy")}


def test_run_imports_neither_planning_nor_replay_nor_sweeps(tmp_path: Path) -> None:
    modules = imported_modules(tmp_path, "run", "--help")
    assert "kubesched.cli.run" in modules
    assert heavy(modules, ("kubesched.planning", "kubesched.replay", "kubesched.sweep", "matplotlib", "dask")) == set()
    other_commands = {e.module for name, e in SUBCOMMANDS.items() if name != "run"}
    assert modules & other_commands == set()


def test_run_loads_the_kubernetes_client_and_httpx_only_when_it_needs_them(tmp_path: Path) -> None:
    # The official client's configuration loaders with a kubeconfig or in the cluster (not for
    # --help); httpx with the first HTTP extender (the default profile has none).
    modules = imported_modules(tmp_path, "run", "--help")
    assert "kubesched.cli.run" in modules and "kubesched.cluster.kube.connection" in modules
    assert heavy(modules, ("kubernetes", "httpx", "rich")) == set()


def test_run_loads_dynamic_resources_machinery_only_when_it_needs_it(tmp_path: Path) -> None:
    # DynamicResources (default profile) loads its manager, allocator, CEL and the DRA records
    # with the first DRA object or pod with claims; NodeResourcesFit's DRA scoring with a scored
    # resource a DeviceClass could back (tests/plugins/test_dra_loading.py).
    modules = imported_modules(tmp_path, "run", "--help")
    assert "kubesched.plugins.dynamicresources.plugin" in modules
    assert heavy(modules, ("kubesched.objects.dra", "kubesched.plugins.dynamicresources.core",
                           "kubesched.plugins.dynamicresources.manager", "kubesched.structured",
                           "kubesched.cel", "kubesched.plugins.noderesources.dra_totals")) == set()


def test_a_subcommand_is_imported_when_it_runs(tmp_path: Path) -> None:
    modules = imported_modules(tmp_path, "config", "show")
    assert "kubesched.cli.config_cmd" in modules
    assert "kubesched.cli.simulate" not in modules


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_each_summary_is_the_commands_own_short_help(name: str) -> None:
    entry = SUBCOMMANDS[name]
    command = getattr(importlib.import_module(entry.module), entry.attribute)
    assert command.name == name
    assert entry.summary == command.get_short_help_str(limit=10_000)


@pytest.mark.parametrize("width", [50, 80, 120, 200])
def test_help_lists_every_subcommand_as_an_eager_group_would(width: int) -> None:
    eager = click.Group("kubesched", help=cli.help, params=list(cli.params),
                        context_settings={"help_option_names": ["-h", "--help"]})
    for name, entry in SUBCOMMANDS.items():
        eager.add_command(getattr(importlib.import_module(entry.module), entry.attribute), name)
    lazy_help = CliRunner().invoke(cli, ["--help"], terminal_width=width, prog_name="kubesched").output
    eager_help = CliRunner().invoke(eager, ["--help"], terminal_width=width, prog_name="kubesched").output
    assert lazy_help == eager_help
    assert all(f"  {name}" in lazy_help for name in SUBCOMMANDS)


def test_summaries_shorten_as_click_shortens_the_full_help() -> None:
    entry = SUBCOMMANDS["sweep"]
    command = getattr(importlib.import_module(entry.module), entry.attribute)
    for limit in range(10, 120, 7):
        assert summary_short_help(entry.summary, limit) == command.get_short_help_str(limit)


def test_an_unknown_subcommand_is_reported_as_before() -> None:
    result = CliRunner().invoke(cli, ["simulat"])
    assert result.exit_code == 2
    assert "No such command 'simulat'" in result.output
