"""docs/plugins.md is verified, block by block.

Every fenced code block of the page follows a marker comment saying how it is checked:

* ``<!-- file: PATH -->``: the block is the whole file at PATH (the tutorial's plugins);
* ``<!-- excerpt: PATH -->``: the block is a contiguous part of the file at PATH;
* ``<!-- write: NAME -->``: the block is saved as NAME in a scratch directory, for the
  commands that follow;
* ``<!-- run: console -->``: each ``$ command`` runs in that directory (``examples`` linked
  in; ``kubesched`` and ``pytest`` in this process, as if in a fresh one) and prints what
  follows it, ``...`` standing for any lines (or,
  ending a line, for the rest of it); a command whose output starts with ``error:``
  must exit 2, any other 0;
* ``<!-- run: python -->``: the block runs, with ``examples/tutorial`` importable;
* ``<!-- toml: entry-points -->``: the block parses, and every entry point of the
  ``kubesched.plugins`` group loads a plugin spec;
* ``<!-- not run: REASON -->``: shown, not run.

A block without a marker fails the test, so nothing on the page goes unchecked.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import tomllib
from contextlib import chdir
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.framework.loader import ENTRY_POINT_GROUP, specs_from

from .tutorial import ROOT, TUTORIAL

DOC = ROOT / "docs" / "plugins.md"
MARKER = re.compile(r"<!--\s*([a-z ]+?)\s*:\s*(.*?)\s*-->")


@dataclass
class Block:
    line: int
    kind: str
    argument: str
    language: str
    text: str


def blocks() -> list[Block]:
    """The page's fenced blocks with the marker on the line before each (kind "" if none)."""
    lines = DOC.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if fence is None:
            i += 1
            continue
        end = i + 1
        while not lines[end].startswith("```"):
            end += 1
        marker = MARKER.fullmatch(lines[i - 1].strip()) if i > 0 else None
        kind, argument = (marker.group(1), marker.group(2)) if marker else ("", "")
        found.append(Block(i + 1, kind, argument, fence.group(1), "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return found


BLOCKS = blocks()
KINDS = {"file", "excerpt", "write", "run", "toml", "not run"}


def test_every_block_says_how_it_is_checked() -> None:
    assert len(BLOCKS) > 20
    unchecked = [f"line {b.line}" for b in BLOCKS if b.kind not in KINDS]
    assert not unchecked, f"blocks without a marker in {DOC.name}: {unchecked}"


def test_every_tutorial_file_is_shown_or_excerpted() -> None:
    shown = {b.argument for b in BLOCKS if b.kind in ("file", "excerpt")}
    tutorial = {f"examples/tutorial/{p.name}" for p in TUTORIAL.glob("*.py")}
    assert {s for s in shown if s.startswith("examples/tutorial/")} == tutorial
    # Beyond the tutorial, only the example package's sources (step 9's placement policy).
    assert {s for s in shown if not s.startswith("examples/tutorial/")} <= {
        f"examples/plugins/src/kubesched_examples/{p.name}"
        for p in (ROOT / "examples" / "plugins" / "src" / "kubesched_examples").glob("*.py")}


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind in ("file", "excerpt")], ids=lambda b: f"line{b.line}")
def test_code_is_the_tutorial_files(block: Block) -> None:
    source = (ROOT / block.argument).read_text()
    if block.kind == "file":
        assert block.text == source, f"{DOC.name} line {block.line} differs from {block.argument}"
    else:
        assert block.text in source, f"{DOC.name} line {block.line} is not a part of {block.argument}"


def test_python_blocks_run() -> None:
    ran = 0
    for block in BLOCKS:
        if block.kind == "run" and block.argument == "python":
            code = compile(block.text, f"{DOC.name}, block at line {block.line}", "exec", dont_inherit=True)
            exec(code, {"__name__": f"doc_block_{block.line}"})  # the tutorial is importable (tutorial.py)
            ran += 1
    assert ran >= 2


def test_entry_points_load() -> None:
    [block] = [b for b in BLOCKS if b.kind == "toml"]
    entries = tomllib.loads(block.text)["project"]["entry-points"][ENTRY_POINT_GROUP]
    names = []  # the tutorial's modules are importable: tests/testing/tutorial.py put them on sys.path
    for name, value in entries.items():
        loaded = EntryPoint(name, value, ENTRY_POINT_GROUP).load()
        names += [spec.name for spec in specs_from(loaded, value)]
    assert sorted(names) == ["FewestPods", "NodePool", "PreferLabel", "WaitForSibling"]


def test_console_blocks_print_what_the_page_shows(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    ran = 0
    for block in BLOCKS:
        if block.kind == "write":
            (tmp_path / block.argument).write_text(block.text)
        elif block.kind == "run" and block.argument == "console":
            for command, expected in commands(block):
                run(command, expected, tmp_path, block.line)
                ran += 1
    assert ran >= 10


def commands(block: Block) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            assert out, f"{DOC.name} line {block.line}: output before any command"
            out[-1][1].append(line)
    return out


def run(command: str, expected: list[str], cwd: Path, line: int) -> None:
    rc, output = execute(command, cwd)
    where = f"{DOC.name} line {line}: $ {command}\n--- printed:\n" + "\n".join(output)
    wanted_rc = 2 if expected and expected[0].startswith("error:") else 0
    assert rc == wanted_rc, where
    assert matches(expected, output), where


def execute(command: str, cwd: Path) -> tuple[int, list[str]]:
    """Run one shell command of the page: ``kubesched`` and ``cat`` in this process (a
    fresh interpreter per command would cost seconds each), ``python -m pytest`` likewise
    (``pytest.main``), anything else through bash."""
    words = shlex.split(command)
    env: dict[str, str] = {}
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words[0] == "cat" and len(words) == 2:
        return 0, (cwd / words[1]).read_text().splitlines()
    if words[0] == "kubesched" and set(env) <= {"PYTHONPATH"}:
        paths = [str(cwd / p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        with importable_only(paths), chdir(cwd):
            result = CliRunner().invoke(cli, words[1:], catch_exceptions=False)
        return result.exit_code, (result.stdout + result.stderr).splitlines()
    if words[:3] == ["python", "-m", "pytest"] and set(env) <= {"PYTHONPATH"}:
        paths = [str(cwd / p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        printed = io.StringIO()
        with importable_only(paths), chdir(cwd), contextlib.redirect_stdout(printed):
            # Installed pytest plugins are left out: they would only slow the inner run down.
            rc = pytest.main([*words[3:], "-o", "console_output_style=progress", "-p", "no:hypothesispytest",
                              "-p", "no:benchmark", "-p", "no:anyio"])
        return int(rc), printed.getvalue().splitlines()
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          env={**clean, "COLUMNS": "80"})  # pytest wraps at a terminal's width
    return done.returncode, (done.stdout + done.stderr).splitlines()


@contextlib.contextmanager
def importable_only(paths: list[str]) -> Iterator[None]:
    """As if PYTHONPATH were ``paths``: the tutorial's modules (which the tests import) are
    hidden unless a path gives them, and modules imported meanwhile from ``paths`` are
    forgotten after. Others imported meanwhile (kubesched's own, installed libraries) stay:
    an extension module must not be initialised twice in one process."""
    saved_path, saved_modules = list(sys.path), dict(sys.modules)
    hidden = {str(TUTORIAL), str(TUTORIAL.resolve())}
    given = set(paths) | {str(Path(p).resolve()) for p in paths}
    sys.path[:] = paths + [p for p in saved_path if p not in hidden]
    for name in [n for n, m in sys.modules.items() if _under(m, hidden)]:
        del sys.modules[name]
    try:
        yield
    finally:
        sys.path[:] = saved_path
        kept = {n: m for n, m in sys.modules.items() if n not in saved_modules and not _under(m, given | hidden)}
        sys.modules.clear()
        sys.modules.update(saved_modules)
        sys.modules.update(kept)


def _under(module: ModuleType | None, roots: set[str]) -> bool:
    file = getattr(module, "__file__", None) or ""
    return any(file.startswith(root + os.sep) for root in roots)


def matches(expected: list[str], output: list[str]) -> bool:
    """``expected`` against ``output``: ``...`` alone matches any lines, ``...`` ending a
    line matches the rest of that line."""
    if not expected:
        return not output
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, output[i:]) for i in range(len(output) + 1))
    if not output:
        return False
    if head.endswith("...") and output[0].startswith(head[:-3]) or output[0] == head:
        return matches(rest, output[1:])
    return False
