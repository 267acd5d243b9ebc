"""docs/planning.md works as written: every `kubesched` command in its ``sh`` blocks runs
(exit 0) on the shipped examples, the lines of the output shown after it are in what it
prints (``...`` marks what the page leaves out), and its Python block runs."""

from __future__ import annotations

import contextlib
import io
from contextlib import chdir
from pathlib import Path

import pytest

from .docs_pages import ROOT, assert_prints_what_is_shown, code_blocks, example_workdir, shell_examples

PAGE = ROOT / "docs" / "planning.md"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return example_workdir(tmp_path)


@pytest.mark.parametrize("command, shown", shell_examples(PAGE), ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_commands_run_and_print_what_the_page_shows(workdir: Path, command: str, shown: str) -> None:
    assert_prints_what_is_shown(workdir, command, shown, skipped=("(",))


def test_the_python_block_runs(workdir: Path) -> None:
    code = next(body for lang, body in code_blocks(PAGE) if lang == "python")
    with chdir(workdir), contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(code, str(PAGE), "exec"), {})
    assert "default" in printed.getvalue()
