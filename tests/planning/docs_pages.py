"""Checking a docs page works as written: its ``sh`` blocks' ``kubesched`` commands run on the
shipped examples and print the lines the page shows after them (``...`` marks what the page
leaves out; table edges are not compared). Shared by the planning and autoscaling pages."""

from __future__ import annotations

import re
import shlex
from contextlib import chdir
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
TABLE_EDGES = ("┏", "┡", "└", "├", "┗")


def code_blocks(page: Path) -> list[tuple[str, str]]:
    """Every fenced block of the page: (language, body)."""
    return [(lang, body) for lang, body in BLOCK.findall(page.read_text())]


def shell_examples(page: Path) -> list[tuple[str, str]]:
    """Each ``sh`` block's command, with the plain output block that follows it (or "")."""
    blocks = code_blocks(page)
    out = []
    for i, (lang, body) in enumerate(blocks):
        if lang != "sh":
            continue
        command = body.replace("\\\n", " ").strip()
        shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else ""
        out.append((command, shown))
    return out


def example_workdir(tmp_path: Path) -> Path:
    """A directory where the page's relative ``examples/...`` paths resolve."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


def assert_prints_what_is_shown(workdir: Path, command: str, shown: str, skipped: tuple[str, ...] = ()) -> None:
    """Run ``command`` (a ``kubesched`` command line) in ``workdir``: it exits 0 and its output
    holds every shown line, but for blank lines, lines with ``...``, table edges and lines
    starting with one of ``skipped``."""
    args = shlex.split(command)
    assert args[0] == "kubesched"
    with chdir(workdir):
        result = CliRunner().invoke(cli, args[1:])
    assert result.exit_code == 0, result.output
    for line in shown.splitlines():
        if not line.strip() or "..." in line or line.startswith(TABLE_EDGES + skipped):
            continue
        assert line.rstrip() in result.output, line
