"""docs/autoscaling.md works as written: every `kubesched` command in its ``sh`` blocks runs
(exit 0) on the shipped examples, the lines of the output shown after it are in what it
prints (``...`` marks what the page leaves out), and the pools file it shows is the one
shipped in examples/planning/."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from .docs_pages import ROOT, assert_prints_what_is_shown, code_blocks, example_workdir, shell_examples

PAGE = ROOT / "docs" / "autoscaling.md"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return example_workdir(tmp_path)


@pytest.mark.parametrize("command, shown", shell_examples(PAGE), ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_commands_run_and_print_what_the_page_shows(workdir: Path, command: str, shown: str) -> None:
    assert_prints_what_is_shown(workdir, command, shown)


def test_the_pools_file_shown_is_the_shipped_one() -> None:
    shown = next(body for lang, body in code_blocks(PAGE) if lang == "yaml")
    assert yaml.safe_load(shown) == yaml.safe_load((ROOT / "examples" / "planning" / "pools.yaml").read_text())
