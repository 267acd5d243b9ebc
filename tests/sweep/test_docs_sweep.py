"""docs/sweep.md works as written: its `kubesched sweep` examples run and print the lines the
page shows (on the tests' cluster instead of a local one of their own), its Python block
runs, and its grid-file schema lists exactly the keys the reader takes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import chdir, contextmanager
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from dask.distributed import Client, LocalCluster

from kubesched.cli.main import cli
from kubesched.sweep import gridfile, runner

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "sweep.md"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
TABLE_EDGES = ("┏", "┃", "┡", "└", "├", "┗")


def _blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in BLOCK.findall(PAGE.read_text())]


def _examples() -> list[tuple[str, str]]:
    """Each ``sh`` block running ``kubesched sweep``, with the output block after it."""
    blocks = _blocks()
    out = []
    for i, (lang, body) in enumerate(blocks):
        command = body.replace("\\\n", " ").strip()
        if lang == "sh" and command.startswith("kubesched sweep"):
            shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else ""
            out.append((command, shown))
    return out


def test_the_page_has_examples() -> None:
    assert len(_examples()) == 2


@pytest.mark.parametrize(("command", "shown"), _examples(), ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_examples_print_what_the_page_shows(cluster: LocalCluster, command: str, shown: str) -> None:
    args = shlex.split(command)[2:]
    at = args.index("--workers")
    args[at:at + 2] = ["--scheduler-address", cluster.scheduler_address]
    with chdir(ROOT):
        result = CliRunner().invoke(cli, ["sweep", *args])
    assert result.exit_code == 0, result.output
    for line in shown.splitlines():
        if not line.strip() or line.startswith(TABLE_EDGES) or line.startswith("sweep:"):
            continue
        for fragment in line.split("..."):
            assert fragment.strip() in result.output, fragment


def test_the_python_block_runs(cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    @contextmanager
    def tests_cluster(address: str | None = None, workers: int | None = None) -> Iterator[Client]:
        with Client(cluster.scheduler_address) as client:
            yield client

    monkeypatch.setattr(runner, "connect", tests_cluster)
    [code] = [body for lang, body in _blocks() if lang == "python"]
    with chdir(ROOT):
        exec(compile(code, str(PAGE), "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed[:2]] == ["Random", "FGD"] and printed[2].startswith("[] ")


def test_the_python_block_works_saved_as_a_script(tmp_path: Path) -> None:
    """As a reader runs it: a file of its own, ``python file.py`` from the repository's
    root, on the local cluster of two worker processes it starts itself."""
    [code] = [body for lang, body in _blocks() if lang == "python"]
    script = tmp_path / "sweep_fgd.py"
    script.write_text(code)
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = proc.stdout.splitlines()
    assert [line.split()[0] for line in printed[:2]] == ["Random", "FGD"] and printed[2].startswith("[] ")


def test_the_schema_table_lists_the_keys_grid_files_take() -> None:
    text = PAGE.read_text()
    table = text[text.index("| key | kind |"):]
    keys = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert sorted(keys) == sorted(set(gridfile.REPLAY_KEYS) | set(gridfile.COMPARE_KEYS))
    for lang, body in _blocks():
        if lang == "yaml":
            document = yaml.safe_load(body)
            allowed = gridfile.REPLAY_KEYS if document["kind"] == "replay" else gridfile.COMPARE_KEYS
            assert set(document) <= set(allowed)
