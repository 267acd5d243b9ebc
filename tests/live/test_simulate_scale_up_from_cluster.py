"""`simulate --kubeconfig --scale-up`: the scale-up from a snapshot taken from an API server is
the one the same objects give from a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kubesched.cli.main import cli
from tests.apiserver import APIServer
from tests.cli.dumps import node, pod, write_list

GROUP = "eks.amazonaws.com/nodegroup"


def objects() -> list[dict[str, Any]]:
    """Two full node groups, three 3-cpu web replicas and a pod too big for any group."""
    items = [node("small-1", cpu="4", memory="16Gi", pool="small"), node("big-1", cpu="16", memory="16Gi", pool="big")]
    items += [pod("fill-small", cpu="4", node_name="small-1"), pod("fill-big", cpu="16", node_name="big-1")]
    items += [pod(f"web-{i}", cpu="3", memory="1Gi", owner="web", labels={"app": "web"}) for i in range(3)]
    items.append(pod("huge", cpu="64"))
    return items


def serve(server: APIServer, items: list[dict[str, Any]]) -> None:
    clean = []
    for obj in items:
        meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "uid", "managedFields")}
        clean.append({**obj, "metadata": meta})
    server.load(clean)


def scale_up(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["simulate", *args, "--scale-up", "--pool-label", GROUP, "-o", "json",
                                      "--tie-break", "name"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.output)["scaleUp"]
    document.pop("seconds")
    document.pop("estimateSeconds")
    # pods created in the same second: the API server lists them by name, a file in its order
    document["pending"] = sorted(document["pending"])
    return document


def test_the_scale_up_from_the_cluster_is_the_files(server: APIServer, kubeconfig: Path, tmp_path: Path):
    items = objects()
    serve(server, items)
    from_cluster = scale_up("--kubeconfig", str(kubeconfig))
    from_file = scale_up(str(write_list(tmp_path / "s.yaml", items)))
    assert from_cluster["answer"]["pool"] == "small"
    assert from_cluster["answer"]["nodes"] == 3
    assert from_cluster == from_file
