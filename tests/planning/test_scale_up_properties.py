"""Properties of the scale-up answer on random small clusters: it is sufficient (a simulation
of the cluster as the run left it, with that many new nodes of the chosen pool, places every
pod it says is helped) and minimal (with one node fewer some helped pod stays pending).

The check here is built apart from the code under test: the run's placements are written
into the pods' own documents as ``spec.nodeName``, and the new nodes and their DaemonSet pods
are copies of the example node's and its DaemonSet pods' documents, renamed.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.planning.scale_up import ScaleUpSpec
from tests.helpers import pod, taint, toleration
from tests.planning.scale_up_clusters import (
    POOL,
    daemon_pod,
    placed_with,
    plan,
    pool_node,
    replicas,
    run,
    snapshot,
)

CPUS = ["500m", "1", "2", "3"]


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    pools = draw(st.integers(1, 3))
    items: list[dict[str, Any]] = []
    examples: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    for p in range(pools):
        name = f"pool{p}"
        cpu = draw(st.sampled_from([2, 4, 8]))
        tainted = draw(st.booleans()) and p > 0
        for i in range(draw(st.integers(1, 2))):
            node_name = f"{name}-{i}"
            raw = pool_node(node_name, name, cpu=str(cpu), memory=draw(st.sampled_from(["4Gi", "8Gi", "16Gi"])),
                            taints=[taint("dedicated", name)] if tainted else None)
            items.append(raw)
            daemons = []
            if draw(st.booleans()):
                daemons.append(daemon_pod(node_name, cpu=draw(st.sampled_from(["100m", "500m", "1"]))))
            items.extend(daemons)
            used = draw(st.integers(0, cpu))
            if used:
                items.append(pod(f"filler-{node_name}", cpu=str(used), memory="1Gi", node_name=node_name))
            examples.setdefault(name, (raw, daemons))
    pending: list[dict[str, Any]] = []
    for w in range(draw(st.integers(1, 3))):
        extra: dict[str, Any] = {}
        if draw(st.booleans()):
            extra["tolerations"] = [toleration("dedicated", operator="Exists")]
        if draw(st.integers(0, 3)) == 0:
            extra["node_selector"] = {POOL: f"pool{draw(st.integers(0, pools - 1))}"}
        if draw(st.integers(0, 3)) == 0:
            extra["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": f"w{w}"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        pending += replicas(f"w{w}", draw(st.integers(1, 5)), cpu=draw(st.sampled_from(CPUS)),
                            memory=draw(st.sampled_from(["256Mi", "1Gi", "3Gi"])), start=10 * w, **extra)
    expanders = draw(st.sampled_from([("least-waste",), ("most-pods",), ("least-nodes",)]))
    return {"items": items + pending, "examples": examples, "expanders": expanders}


def _settled(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``items`` with the run's placements written in, as documents."""
    _, result = run(snapshot(*items))
    out = []
    for item in items:
        item = copy.deepcopy(item)
        if item["kind"] == "Pod":
            key = f"{item['metadata']['namespace']}/{item['metadata']['name']}"
            outcome = result.outcomes.get(key)
            if outcome is not None and outcome.node:
                item["spec"]["nodeName"] = outcome.node
        out.append(item)
    return out


def _new_nodes(example: tuple[dict[str, Any], list[dict[str, Any]]], count: int) -> list[dict[str, Any]]:
    raw, daemons = example
    out = []
    for i in range(count):
        name = f"added-{i}"
        node = copy.deepcopy(raw)
        node["metadata"]["name"] = name
        node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        out.append(node)
        for daemon in daemons:
            copied = copy.deepcopy(daemon)
            copied["metadata"]["name"] = f"{daemon['metadata']['name']}-{i}"
            copied["metadata"]["uid"] = f"{daemon['metadata']['uid']}-{i}"
            copied["spec"]["nodeName"] = name
            out.append(copied)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_the_answer_is_sufficient_and_minimal(cluster: dict[str, Any]):
    items = cluster["items"]
    scale = plan(*items, spec=ScaleUpSpec(expanders=cluster["expanders"]))
    if scale.answer is None:
        # no pool takes a pending pod: the estimate of every pool placed nothing
        assert all(p.estimate is None or not p.estimate.pods for p in scale.pools)
        return
    answer = scale.answer
    assert answer.node_count >= 1 and answer.helped
    settled = _settled(items)
    example = cluster["examples"][answer.pool]
    with_answer = placed_with(settled, _new_nodes(example, answer.node_count))
    assert set(answer.helped) <= with_answer
    with_one_fewer = placed_with(settled, _new_nodes(example, answer.node_count - 1))
    assert not set(answer.helped) <= with_one_fewer
