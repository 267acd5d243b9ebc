"""Signatures against upstream v1.36.2's own (``cases-runs/README.md``): every queued pod's
result carries ``sig``, eight hex digits of the signature upstream's ``SignPod`` gave it
(absent: unsignable). The digits are upstream's and not reproducible here, but they name
its classes of twins: kubesched must sign the same pods, and give two pods one signature
exactly when upstream gave them one.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.framework.config import parse_config
from kubesched.framework.profile import build_framework
from kubesched.objects.pod import parse_pod
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.handle import HandleHub
from tests.conformance.runs import CASES, load_case, simulate_run

@pytest.mark.parametrize("path", CASES, ids=[p.name.removesuffix(".json.gz") for p in CASES])
def test_pods_share_a_signature_exactly_when_upstreams_did(path: Path) -> None:
    case = load_case(path)
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


def test_host_ports_on_another_ip_batch_and_bind_as_upstreams_run(tmp_path: Path) -> None:
    # Every other queued pod of the host-port workload asks for its 8080/TCP on host IP
    # 10.0.0.1 instead of all IPs. Every other pod there asks for 8080/TCP on all IPs, which
    # conflicts with any IP: NodePorts answers every pod on every node as before, and
    # upstream's signature holds port numbers only, so upstream's run is the recorded one:
    # the same hints, the same nodes.
    case = load_case(Path(__file__).parent / "cases-runs" / "batch-hostport-50-ptslist.json.gz")
    case = copy.deepcopy(case)
    for i, raw in enumerate(case["scenario"]["queue"]):
        if i % 2:
            for c in raw["spec"]["containers"]:
                for port in c.get("ports") or []:
                    if port.get("hostPort"):
                        port["hostIP"] = "10.0.0.1"
    bound, first = simulate_run(case, tmp_path)
    hints = {pod: record["walk"]["hint"] for pod, record in first.items()}
    expected = case["expected"]["results"]
    assert [hints.get(r["pod"]) for r in expected] == [r["hint"] for r in expected]
    assert [bound.get(r["pod"]) for r in expected] == [r["node"] for r in expected]
