"""Fixtures for the example plugins' tests: the package as a user installs it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .support import SRC, Cli, write_dist_info

# In-process tests import the plugins from their sources, as ``--plugin`` would.
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


@pytest.fixture
def installed(tmp_path: Path) -> Cli:
    """``kubesched`` in a subprocess that finds the plugins through their entry points: a
    ``kubesched_example_plugins-0.0.0.dist-info`` on its path, as ``pip install`` leaves it."""
    site, work = tmp_path / "site", tmp_path / "work"
    write_dist_info(site)
    work.mkdir()
    return Cli(work, site)


@pytest.fixture
def not_installed(tmp_path: Path) -> Cli:
    """``kubesched`` in a subprocess that can import the plugins but has no entry points for them."""
    work = tmp_path / "work"
    work.mkdir()
    return Cli(work, None)
