"""Signatures against upstream v1.36.2's own (``cases-runs/README.md``): every queued pod's
result carries ``sig``, eight hex digits of the signature upstream's ``SignPod`` gave it
(absent: unsignable). The digits are upstream's and not reproducible here, but they name
its classes of twins: kubesched must sign the same pods, and give two pods one signature
exactly when upstream gave them one.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cache.cache import Cache
from kubesched.cli.main import cli
from kubesched.clock import VirtualClock
from kubesched.framework.config import parse_config
from kubesched.framework.profile import build_framework
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.handle import HandleHub

CASES = sorted((Path(__file__).parent / "cases-runs").glob("*.json.gz"))


def _load(path: Path) -> dict[str, Any]:
    with gzip.open(path) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


@pytest.mark.parametrize("path", CASES, ids=[p.name.removesuffix(".json.gz") for p in CASES])
def test_pods_share_a_signature_exactly_when_upstreams_did(path: Path) -> None:
    case = _load(path)
    registry = in_tree_registry()
    profile = parse_config(case["config"], registry, UPSTREAM_ONLY).profiles[0]
    handle = HandleHub(Cache(), VirtualClock(), None).handle(profile.scheduler_name)
    fwk = build_framework(profile, registry, handle)
    ours_by_upstream: dict[str, set[object]] = {}
    upstream_by_ours: dict[object, set[str]] = {}
    for raw, expected in zip(case["scenario"]["queue"], case["expected"]["results"], strict=True):
        assert raw["metadata"]["namespace"] + "/" + raw["metadata"]["name"] == expected["pod"]
        signature = fwk.sign_pod(parse_pod(raw))
        upstream = expected.get("sig")
        assert (signature is None) == (upstream is None), f"{expected['pod']}: upstream sig {upstream}, ours {signature}"
        if upstream is not None:
            ours_by_upstream.setdefault(upstream, set()).add(signature)
            upstream_by_ours.setdefault(signature, set()).add(upstream)
    assert all(len(ours) == 1 for ours in ours_by_upstream.values()), "pods upstream signed alike are signed apart"
    assert all(len(theirs) == 1 for theirs in upstream_by_ours.values()), "pods upstream signed apart are signed alike"


def _bind(case: dict[str, Any], tmp: Path) -> tuple[dict[str, str], dict[str, str]]:
    """``simulate`` on the workload: each queued pod's node, and whether its attempt took a hint."""
    scenario = case["scenario"]
    items = [{"apiVersion": "v1", "kind": "Namespace", **ns} for ns in scenario.get("namespaces") or []]
    items += [{"apiVersion": "v1", "kind": "Node", **n} for n in scenario["nodes"]]
    items += [{"apiVersion": "v1", "kind": "Pod", **p} for p in scenario["pods"] + scenario["queue"]]
    (tmp / "list.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    (tmp / "config.json").write_text(json.dumps(case["config"]))
    result = CliRunner().invoke(cli, ["simulate", str(tmp / "list.json"), "--config", str(tmp / "config.json"),
                                      "--output", str(tmp / "out.txt"), "--explain", str(tmp / "explain.jsonl"),
                                      "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    bound = dict(line.split(" -> ") for line in (tmp / "out.txt").read_text().splitlines())
    hints: dict[str, str] = {}
    for line in (tmp / "explain.jsonl").read_text().splitlines():
        record = json.loads(line)
        hints.setdefault(record["pod"], record["walk"]["hint"])
    return bound, hints


def test_host_ports_on_another_ip_batch_and_bind_as_upstreams_run(tmp_path: Path) -> None:
    # Every other queued pod of the host-port workload asks for its 8080/TCP on host IP
    # 10.0.0.1 instead of all IPs. Every other pod there asks for 8080/TCP on all IPs, which
    # conflicts with any IP: NodePorts answers every pod on every node as before, and
    # upstream's signature holds port numbers only, so upstream's run is the recorded one:
    # the same hints, the same nodes.
    case = _load(Path(__file__).parent / "cases-runs" / "batch-hostport-50-ptslist.json.gz")
    case = copy.deepcopy(case)
    for i, raw in enumerate(case["scenario"]["queue"]):
        if i % 2:
            for c in raw["spec"]["containers"]:
                for port in c.get("ports") or []:
                    if port.get("hostPort"):
                        port["hostIP"] = "10.0.0.1"
    bound, hints = _bind(case, tmp_path)
    expected = case["expected"]["results"]
    assert [hints.get(r["pod"]) for r in expected] == [r["hint"] for r in expected]
    assert [bound.get(r["pod"]) for r in expected] == [r["node"] for r in expected]
