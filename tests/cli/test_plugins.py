"""Out-of-tree plugins on the command line: loaded from entry points or ``--plugin``, and
every way one can be broken reported as one line naming it, exit 2."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli

PLUGINS = '''
from dataclasses import dataclass

from kubesched.framework import CycleState, Handle, PluginSpec, Status, Code
from kubesched.objects import NodeInfo, PodInfo


class OnlyEven:
    """Filter: nodes whose name ends in an even digit."""

    name = "OnlyEven"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if int(node.name[-1]) % 2 == 0:
            return None
        return Status(Code.UNSCHEDULABLE, "node(s) had an odd name")


@dataclass(frozen=True)
class BoomArgs:
    fail: bool = True


class Boom:
    name = "Boom"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 0


def new_boom(args: BoomArgs, handle: Handle) -> Boom:
    if args.fail:
        raise RuntimeError("no license key")
    return Boom()


only_even = PluginSpec("OnlyEven", lambda args, handle: OnlyEven())
boom = PluginSpec("Boom", new_boom, args_type=BoomArgs)
both = [only_even, boom]
clash = PluginSpec("NodeName", lambda args, handle: OnlyEven())
not_a_spec = 42
'''

SNAPSHOT = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        *({"kind": "Node", "metadata": {"name": f"n{i}"},
           "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in range(1, 4)),
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "p"},
         "spec": {"containers": [{"name": "c", "image": "i"}]}},
    ],
}


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text))
    return str(path)


FILTER_CONFIG = """\
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    profiles:
    - schedulerName: default-scheduler
      plugins:
        filter:
          enabled: [{name: OnlyEven}]
"""


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_plugins.py").write_text(PLUGINS)
    (tmp_path / "broken_plugins.py").write_text("raise ImportError('libfoo.so not found')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import json

    (tmp_path / "cluster.json").write_text(json.dumps(SNAPSHOT))
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_plugin_given_with_dash_dash_plugin_schedules(env: Path):
    code, out, err = run("simulate", str(env / "cluster.json"), "--config", _config(env, FILTER_CONFIG),
                         "--plugin", "my_plugins:only_even", "--output", str(env / "out.txt"), "-q")
    assert code == 0, err
    assert (env / "out.txt").read_text() == "default/p -> n2\n"


def test_a_plugin_installed_under_the_entry_point_group_loads_without_a_flag(env: Path):
    dist = env / "my_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugins\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[kubesched.plugins]\nonly_even = my_plugins:only_even\n")
    code, _, err = run("simulate", str(env / "cluster.json"), "--config", _config(env, FILTER_CONFIG),
                       "--output", str(env / "out.txt"), "-q")
    assert code == 0, err
    assert (env / "out.txt").read_text() == "default/p -> n2\n"


def test_config_show_lists_an_out_of_tree_plugin(env: Path):
    code, out, err = run("config", "show", _config(env, FILTER_CONFIG), "--plugin", "my_plugins:both")
    assert code == 0, err
    assert "OnlyEven" in out


@pytest.mark.parametrize(
    ("target", "line"),
    [
        ("missing_module:spec", "error: plugin missing_module:spec: cannot import missing_module: ModuleNotFoundError"),
        ("broken_plugins:spec", "error: plugin broken_plugins:spec: cannot import broken_plugins: ImportError: libfoo.so not found"),
        ("my_plugins:nothing", "error: plugin my_plugins:nothing: module 'my_plugins' has no attribute 'nothing'"),
        ("my_plugins:not_a_spec", "error: plugin my_plugins:not_a_spec: is a int, not a kubesched.framework.PluginSpec"),
        ("my_plugins", "error: plugin my_plugins: want module:attribute"),
        ("my_plugins:clash", 'error: plugin "NodeName" from my_plugins:clash: a plugin of that name is already registered'),
    ],
)
def test_a_plugin_that_does_not_load_is_one_line_and_exit_2(env: Path, target: str, line: str):
    code, _, err = run("simulate", str(env / "cluster.json"), "--plugin", target)
    assert code == 2
    assert err.startswith(line), err
    assert len(err.strip().splitlines()) == 1


def _enabling(env: Path, point: str, plugin: str, plugin_config: str = "") -> str:
    """A config file enabling ``plugin`` at ``point`` (plus a pluginConfig entry, if given)."""
    return _config(env, f"""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: default-scheduler
          plugins:
            {point}:
              enabled: [{{name: {plugin}}}]
          {plugin_config}
    """)


def test_a_plugin_whose_factory_raises_is_named(env: Path):
    config = _enabling(env, "score", "Boom")
    code, _, err = run("simulate", str(env / "cluster.json"), "--config", config, "--plugin", "my_plugins:both")
    assert code == 2
    assert 'plugin "Boom": initializing: no license key' in err
    assert len(err.strip().splitlines()) == 1


def test_bad_args_of_a_plugin_name_the_field(env: Path):
    config = _enabling(env, "score", "Boom", 'pluginConfig: [{name: Boom, args: {fail: "no"}}]')
    code, _, err = run("simulate", str(env / "cluster.json"), "--config", config, "--plugin", "my_plugins:both")
    assert code == 2
    assert "profiles[0].pluginConfig[0].args.fail: must be a boolean" in err


def test_a_plugin_enabled_at_a_point_it_does_not_implement_is_named(env: Path):
    config = _enabling(env, "score", "OnlyEven")
    code, _, err = run("simulate", str(env / "cluster.json"), "--config", config, "--plugin", "my_plugins:only_even")
    assert code == 2
    assert 'plugin "OnlyEven" does not extend score plugin' in err


# -- a broken installed package --------------------------------------------------------------------
def _install_broken(env: Path) -> None:
    """An installed package whose entry point fails to import (a missing native library)."""
    dist = env / "acme_broken-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-broken\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[kubesched.plugins]\nquota = broken_plugins:spec\n")


BROKEN = "package acme-broken, entry point 'quota' (broken_plugins:spec): cannot import: ImportError: libfoo.so not found"


def test_a_broken_installed_package_is_one_warning_for_config_show(env: Path):
    _install_broken(env)
    code, out, err = run("config", "show")
    assert code == 0, err
    assert "NodeResourcesFit" in out
    assert err.splitlines() == [f"warning: plugin {BROKEN}; its plugins are not available"]


def test_a_broken_installed_package_is_one_warning_for_a_default_simulate(env: Path):
    _install_broken(env)
    code, _, err = run("simulate", str(env / "cluster.json"), "--output", str(env / "out.txt"), "-q")
    assert code == 0, err
    assert err.splitlines() == [f"warning: plugin {BROKEN}; its plugins are not available"]
    assert (env / "out.txt").read_text().startswith("default/p -> ")


def test_a_broken_installed_package_fails_a_config_that_enables_a_missing_plugin_in_one_line(env: Path):
    _install_broken(env)
    code, _, err = run("simulate", str(env / "cluster.json"), "--config", _enabling(env, "filter", "TeamQuota"))
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert err.strip().endswith(f'plugins.filter.enabled[0]: plugin "TeamQuota" does not exist; installed plugin {BROKEN}')


def test_a_working_sibling_of_a_broken_package_still_loads(env: Path):
    _install_broken(env)
    dist = env / "my_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugins\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[kubesched.plugins]\nonly_even = my_plugins:only_even\n")
    code, _, err = run("simulate", str(env / "cluster.json"), "--config", _config(env, FILTER_CONFIG),
                       "--output", str(env / "out.txt"), "-q")
    assert code == 0, err
    assert (env / "out.txt").read_text() == "default/p -> n2\n"
    assert len(err.splitlines()) == 1 and "acme-broken" in err
