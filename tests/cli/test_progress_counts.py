"""Progress of a phase whose size is not known in advance (objects listed from a cluster):
the count so far, with its unit."""

from __future__ import annotations

import io
import re

from kubesched.cli.progress import PhaseProgress
from tests.cli.test_simulate_report import _wait_for


def test_a_phase_without_a_total_prints_its_count_off_a_terminal():
    stream = io.StringIO()
    progress = PhaseProgress(stream, terminal=False, delay=0, every=0)
    progress.start("listing pods from https://cluster", unit="pods")
    _wait_for(stream, "listing pods from https://cluster... 0 pods\n")
    progress.update(1500)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[1] == "listing pods from https://cluster... 1500 pods"
    assert re.fullmatch(r"listing pods from https://cluster: done in \d+\.\ds", lines[-1])

