"""The example plugins as a package: found through their entry points, loadable with
``--plugin``, typed, and the demo its README describes."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib

import pytest

from .support import COSCHEDULING, DEMO, PACKAGE, ROOT, SRC, Cli, config, cpu_node, member, pod_group

GANG = [cpu_node("n0"), cpu_node("n1"), pod_group("a", 2)] + [member(f"a-{i}", "a") for i in range(2)]


def test_simulate_finds_the_plugins_through_their_entry_points(installed: Cli):
    run = installed.simulate(GANG, config(gpu_packing=True))
    assert run.returncode == 0, run.stderr
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]
    assert all("GPUPacking" in scores for attempt in run.attempts for scores in attempt["scores"].values())


@pytest.mark.skipif(
    any(d.metadata["Name"] == "kubesched-example-plugins" for d in importlib.metadata.distributions()),
    reason="the package is installed here: its entry points are always found",
)
def test_without_the_entry_points_the_plugins_are_unknown(not_installed: Cli):
    run = not_installed.simulate(GANG, config())
    assert run.returncode == 2
    assert 'plugin "Coscheduling" does not exist' in run.stderr


def test_the_plugin_option_loads_coscheduling_without_entry_points(not_installed: Cli):
    run = not_installed.simulate(GANG, config(), "--plugin", COSCHEDULING)
    assert run.returncode == 0, run.stderr
    assert sorted(run.placements) == ["default/a-0", "default/a-1"]


def test_the_demo_binds_the_gangs_that_fit_and_nothing_of_the_one_that_cannot(installed: Cli):
    run = installed.simulate(DEMO / "cluster.yaml", DEMO / "scheduler-config.yaml")
    assert run.returncode == 0, run.stderr
    assert run.placements == {
        **{f"default/web-{i}": f"cpu-{i % 2}" for i in range(4)},  # no GPU: kept off the GPU nodes
        **{f"ml/train-{i}": "gpu-0" for i in range(4)},  # packed onto the partly used GPU node
        "ml/finetune-0": "gpu-0",
        "ml/finetune-1": "gpu-1",
    }
    unschedulable = run.unschedulable()
    assert set(unschedulable) == {"ml/big-0", "ml/big-1", "ml/eval-0", "ml/eval-1"}
    assert unschedulable["ml/eval-0"].startswith(
        "0/4 nodes are available: pre-filter pod eval-0 cannot find enough sibling pods, current pods number: 2, "
        "minMember of group: 3."
    )
    assert run.requested_cpu()["gpu-1"] == "4"  # big-0 gave gpu-1 back when its gang was rejected


def test_the_readme_shows_the_demos_commands():
    readme = (PACKAGE / "README.md").read_text()
    assert "pip install ./examples/plugins" in readme
    assert "kubesched simulate examples/plugins/demo/cluster.yaml --config examples/plugins/demo/scheduler-config.yaml" in readme


def test_the_package_declares_its_entry_points_and_ships_its_types():
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    assert project["project"]["name"] == "kubesched-example-plugins"
    assert "kubesched" in project["project"]["dependencies"]
    assert project["project"]["entry-points"]["kubesched.plugins"] == {
        "coscheduling": "kubesched_examples.coscheduling:spec",
        "gpu_packing": "kubesched_examples.gpu_packing:spec",
        "rack_locality": "kubesched_examples.rack_locality:spec",
    }
    assert (SRC / "kubesched_examples" / "py.typed").exists()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["kubesched_examples"]


def test_the_plugins_pass_mypy_strict():
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "examples/plugins/src"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_plugins_import_only_the_sdk():
    for path in (SRC / "kubesched_examples").glob("*.py"):
        for line in path.read_text().splitlines():
            if line.startswith(("import kubesched", "from kubesched")):
                module = line.split()[1]
                assert module in ("kubesched.framework", "kubesched.objects"), f"{path.name}: {line}"
