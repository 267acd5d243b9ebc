"""A third-party plugin package as a platform team ships it (``acme/``), with a broken
sibling package (``broken/``) installed beside it: both found through their entry points,
as ``pip install`` leaves them (a ``.dist-info`` on the path), and the command line run
in process."""

from __future__ import annotations

import json
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kubesched.cli.main import cli

HERE = Path(__file__).resolve().parent
PACKAGES = {"acme": HERE / "acme", "broken": HERE / "broken"}

if str(PACKAGES["acme"] / "src") not in sys.path:  # in-process tests import the plugins from source
    sys.path.insert(0, str(PACKAGES["acme"] / "src"))


def install(site: Path, package: Path) -> None:
    """What ``pip install`` leaves for ``importlib.metadata``: METADATA and entry_points.txt."""
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {value}" for name, value in entries.items())
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")


@dataclass
class Acme:
    work: Path

    def write(self, name: str, content: object) -> str:
        path = self.work / name
        path.write_text(json.dumps(content) if not isinstance(content, str) else textwrap.dedent(content))
        return str(path)

    def run(self, *args: str) -> Result:
        return CliRunner().invoke(cli, list(args))

    def explain(self, name: str) -> dict[str, dict]:
        return {r["pod"]: r for r in map(json.loads, (self.work / name).read_text().splitlines())}


@pytest.fixture()
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Acme:
    """Both packages installed (the broken one too), their sources importable."""
    site = tmp_path / "site"
    for package in PACKAGES.values():
        install(site, package)
        monkeypatch.syspath_prepend(str(package / "src"))
    monkeypatch.syspath_prepend(str(site))
    work = tmp_path / "work"
    work.mkdir()
    return Acme(work)
