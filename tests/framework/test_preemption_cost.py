"""Preemption's cost follows the nodes that can yield victims; ``CycleState.clone`` copies
only ``StateData`` values. The decisions themselves are the conformance cases'."""

from __future__ import annotations

import pytest

from kubesched.cluster.simulated import Simulation
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework import Code, CycleState, Handle, PluginSpec, PreFilterResult, SnapshotView, StateKey, Status
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.registry import Registry
from kubesched.objects import NodeInfo, PodInfo
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

BLOCKED = Status(Code.UNSCHEDULABLE, "blocked by test")


class Count:
    clones = 0  # how many copies preemption made, over all instances

    def __init__(self) -> None:
        self.value = 0

    def clone(self) -> "Count":
        Count.clones += 1
        copy = Count()
        copy.value = self.value
        return copy


COUNT: StateKey[Count] = StateKey("test.kubesched.io/count")


class BlockLabelled:
    """Rejects pods labelled ``block`` on every node as Unschedulable; counts per-node
    Filter calls and the RemovePod calls preemption makes."""

    name = "BlockLabelled"

    def __init__(self) -> None:
        self.filter_calls = 0
        self.removed = 0

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        state.write(COUNT, Count())
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        self.filter_calls += 1
        return BLOCKED if "block" in pod.labels else None

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        self.removed += 1
        return None


def _node(name: str) -> dict:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}


def _pod(name: str, node: str = "", priority: int = 0, labels: dict | None = None) -> dict:
    spec: dict = {"priority": priority, "containers": [{"name": "c"}]}
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels or {}},
            "spec": spec}


def _run(objects: list[dict]) -> tuple[BlockLabelled, Simulation]:
    plugin = BlockLabelled()

    def new(args: None, handle: Handle) -> BlockLabelled:
        return plugin

    registry: Registry = in_tree_registry()
    registry.register(PluginSpec("BlockLabelled", new))
    raw = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"enabled": [{"name": "BlockLabelled"}]}}}]}
    sim = Simulation(snapshot_from_objects([("t", o) for o in objects]), parse_config(raw, registry, UPSTREAM_ONLY),
                     registry, tie_break="name")
    return plugin, sim


def test_nodes_without_lower_priority_pods_are_not_dry_run():
    nodes = [_node(f"n{i}") for i in range(20)]
    running = [_pod(f"run{i}", node=f"n{i}", priority=5) for i in range(20)]
    plugin, sim = _run(nodes + running + [_pod("p", priority=5, labels={"block": "yes"})])
    Count.clones = 0
    result = sim.run()
    assert Count.clones == 0  # no node copied, nor the state for it
    assert plugin.filter_calls == 20  # the scheduling cycle's own filtering, nothing more
    assert plugin.removed == 0
    assert result.outcomes["default/p"].message == (
        "0/20 nodes are available: 20 blocked by test. no new claims to deallocate, preemption: 0/20 nodes are available: "
        "20 No preemption victims found for incoming pod.")


def test_only_nodes_with_lower_priority_pods_are_dry_run():
    nodes = [_node(f"n{i}") for i in range(10)]
    running = [_pod(f"run{i}", node=f"n{i}", priority=1 if i < 3 else 9) for i in range(10)]
    plugin, sim = _run(nodes + running + [_pod("p", priority=5, labels={"block": "yes"})])
    Count.clones = 0
    result = sim.run()
    assert Count.clones == 3  # the state copied for each of those nodes only
    assert plugin.removed == 3  # one victim removed on each of the three nodes that have one
    assert result.outcomes["default/p"].message == (
        "0/10 nodes are available: 10 blocked by test. no new claims to deallocate, preemption: 0/10 nodes are available: "
        "3 blocked by test, 7 No preemption victims found for incoming pod.")


def test_clone_copies_values_with_a_clone_method_and_shares_the_rest():
    state = CycleState()
    count, shared = Count(), {"a": 1}
    state.write(COUNT, count)
    state.write(StateKey[dict]("test.kubesched.io/shared"), shared)
    copy = state.clone()
    assert copy.read(COUNT) is not count and copy.read(COUNT).value == count.value
    assert copy.read(StateKey[dict]("test.kubesched.io/shared")) is shared


class NamesOnly:
    """A NodeToStatusReader without the scheduler's ``rows_with``: what a reader of another
    make offers (preemption then works by node name)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def status_of(self, node_name: str) -> Status:
        return self._inner.status_of(node_name)  # type: ignore[attr-defined, no-any-return]

    def node_names_with(self, code: Code) -> list[str]:
        return self._inner.node_names_with(code)  # type: ignore[attr-defined, no-any-return]


def _preempting_cluster() -> list[dict]:
    nodes = [_node(f"n{i}") for i in range(8)]
    running = [_pod(f"run{i}", node=f"n{i}", priority=1 if i % 3 == 0 else 9) for i in range(8)]
    return nodes + running + [_pod("p", priority=5, labels={"block": "yes"})]


def test_a_reader_without_rows_gets_the_same_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = []
    for wrap in (False, True):
        plugin, sim = _run(_preempting_cluster())
        preemption = sim.scheduler.profiles["default-scheduler"].plugin("DefaultPreemption")
        if wrap:
            original = preemption.post_filter
            monkeypatch.setattr(preemption, "post_filter", lambda state, pod, filtered: original(state, pod, NamesOnly(filtered)))
        result = sim.run(max_attempts=1)
        outcomes.append((result.outcomes["default/p"].message, sorted(result.preemptions)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0].endswith("preemption: 0/8 nodes are available: 3 blocked by test, "
                                   "5 No preemption victims found for incoming pod.")
