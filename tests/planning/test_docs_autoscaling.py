"""docs/autoscaling.md works as written: every `kubesched` command in its ``sh`` blocks runs
(exit 0) on the shipped examples, the lines of the output shown after it are in what it
prints (``...`` marks what the page leaves out), and the pools file it shows is the one
shipped in examples/planning/."""

from __future__ import annotations

import re
import shlex
from contextlib import chdir
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "autoscaling.md"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
TABLE_EDGES = ("┏", "┡", "└", "├", "┗")


def _blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in BLOCK.findall(PAGE.read_text())]


def _examples() -> list[tuple[str, str]]:
    """Each ``sh`` block's command, with the output block that follows it (or "")."""
    blocks = _blocks()
    out = []
    for i, (lang, body) in enumerate(blocks):
        if lang != "sh":
            continue
        command = body.replace("\\\n", " ").strip()
        shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else ""
        out.append((command, shown))
    return out


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


@pytest.mark.parametrize("command, shown", _examples(), ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_commands_run_and_print_what_the_page_shows(workdir: Path, command: str, shown: str) -> None:
    args = shlex.split(command)
    assert args[0] == "kubesched"
    with chdir(workdir):
        result = CliRunner().invoke(cli, args[1:])
    assert result.exit_code == 0, result.output
    for line in shown.splitlines():
        if not line.strip() or "..." in line or line.startswith(TABLE_EDGES):
            continue
        assert line.rstrip() in result.output, line


def test_the_pools_file_shown_is_the_shipped_one() -> None:
    shown = next(body for lang, body in _blocks() if lang == "yaml")
    assert yaml.safe_load(shown) == yaml.safe_load((ROOT / "examples" / "planning" / "pools.yaml").read_text())
