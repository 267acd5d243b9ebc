"""docs/research.md works as written: each Python block runs from the repository's root."""

from __future__ import annotations

import re
from contextlib import chdir
from pathlib import Path

import pytest

from kubesched.research import simulate

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "research.md"
BLOCKS = [body for lang, body in re.findall(r"```(\w*)\n(.*?)```", PAGE.read_text(), re.S) if lang == "python"]


def test_the_page_has_its_three_examples() -> None:
    assert len(BLOCKS) == 3


@pytest.mark.parametrize("code", BLOCKS, ids=["simulate", "edit", "replay"])
def test_each_python_block_runs(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    with chdir(ROOT):
        exec(compile(code, str(PAGE), "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip()


def test_the_tables_documented_are_the_tables_returned() -> None:
    text = PAGE.read_text()
    run = simulate(ROOT / "examples" / "demo-cluster.yaml", tie_break="name")
    for table in (run.placements, run.pods, run.attempts, run.nodes):
        row = next(line for line in text.splitlines() if line.startswith(f"| `{table.name}` |"))
        assert all(f"`{n}`" in row for n in table.column_names), table.name
