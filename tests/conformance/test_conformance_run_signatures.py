"""Signatures against upstream v1.36.2's own (``cases-runs/README.md``): every queued pod's
result carries ``sig``, eight hex digits of the signature upstream's ``SignPod`` gave it
(absent: unsignable). The digits are upstream's and not reproducible here, but they name
its classes of twins: kubesched must sign the same pods, and give two pods one signature
exactly when upstream gave them one.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kubesched.cache.cache import Cache
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
