"""`simulate` and SchedulerPopFromBackoffQ's trap: a failed gang with a member that fits
nowhere is retried from backoffQ whenever activeQ is empty; upstream does so back to back,
``simulate`` only after the cluster changed, and its report says so (text and JSON)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.helpers import node
from tests.scheduler.podgroup_support import raw_group, raw_member

GATES = "GenericWorkload=true,GangScheduling=true"


def trap(tmp_path: Path) -> Path:
    pods = [raw_member("g0", "pg", priority=10), raw_member("g1", "pg", priority=10),
            raw_member("g2", "pg", cpu="8", priority=10), raw_member("late", None)]
    items = [node("n0"), node("n1"), raw_group("pg", 3), *pods]
    path = tmp_path / "trap.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def test_the_report_says_which_groups_were_retried_from_backoff(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(trap(tmp_path)), "--feature-gates", GATES],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert ("1 failed pod group(s) were retried from backoffQ while activeQ was empty (1 cycle(s); "
            "SchedulerPopFromBackoffQ)") in text
    assert "simulate retried each only after the cluster changed: default/pg" in text


def test_the_json_report_counts_the_retries_per_group(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(trap(tmp_path)), "--feature-gates", GATES, "-o", "json"],
                                catch_exceptions=False)
    assert json.loads(result.output)["podGroupBackoffRetries"] == {"default/pg": 1}
