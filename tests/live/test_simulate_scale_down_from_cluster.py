"""`simulate --kubeconfig --scale-down` (issue 27): the plan from a cluster's snapshot is the
file's, local storage included (read from the listed pods' documents)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.apiserver import APIServer
from tests.cli.dumps import node, pod, write_list
from tests.live.test_simulate_from_cluster import serve


def scale_down(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["simulate", *args, "--scale-down", "-o", "json", "--tie-break", "name"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)["scaleDown"]
    return document


def test_scale_down_from_the_cluster_gives_the_file_s_answer(server: APIServer, kubeconfig: Path, tmp_path: Path):
    scratch = pod("cache-0", cpu="100m", node_name="n3", owner="cache", volumes=[{"name": "tmp", "emptyDir": {}}])
    items = [node("n1", cpu="4"), node("n2", cpu="8"), node("n3", cpu="4"),
             pod("web-0", cpu="500m", node_name="n1", owner="web"), pod("batch-0", cpu="5", node_name="n2", owner="batch"),
             scratch]
    serve(server, items)
    from_cluster = scale_down("--kubeconfig", str(kubeconfig))
    assert from_cluster == scale_down(str(write_list(tmp_path / "s.yaml", items)))
    assert [r["node"] for r in from_cluster["removable"]] == ["n1"]
    assert {k["node"]: k["message"] for k in from_cluster["kept"]}["n3"] == "pod default/cache-0 has local storage (volume tmp)"
