"""``python -m kubesched`` is the ``kubesched`` command."""

from __future__ import annotations

import subprocess
import sys

from kubesched import __version__


def test_python_dash_m_kubesched_runs_the_command() -> None:
    result = subprocess.run([sys.executable, "-m", "kubesched", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout.strip() == f"kubesched, version {__version__}"
