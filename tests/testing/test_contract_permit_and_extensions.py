"""The contract suite's Permit and PreFilterExtensions checks, and the author's say over
random clusters (namespaces, node shapes, annotations): each new check passes a correct
plugin and fails a deliberately broken one."""

from __future__ import annotations

import pytest

from kubesched.framework import Code, CycleState, Handle, Plugin, PluginSpec, PreFilterResult, SnapshotView, StateKey, Status
from kubesched.objects import NodeInfo, PodInfo
from kubesched.testing import (
    ContractError,
    assert_permit_answers,
    assert_plugin_contract,
    assert_pre_filter_extensions_agree,
    random_cluster,
    random_clusters,
)

from .tutorial import module

NAMESPACES = ["team-a", "team-b", "team-c"]
CLUSTERS = random_clusters(20, seed=3, namespaces=NAMESPACES)
LIMIT = 2
OVER = Status(Code.UNSCHEDULABLE, "namespace over its pod quota")


def spec_of(cls: type, name: str) -> PluginSpec[None]:
    def new(args: None, handle: Handle) -> Plugin:
        plugin: Plugin = cls()
        return plugin

    return PluginSpec(name, new)


# -- Permit ----------------------------------------------------------------------------------
class WaitsZero:
    name = "WaitsZero"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.WAIT, "waiting"), 0.0


class RejectsSilently:
    name = "RejectsSilently"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.UNSCHEDULABLE), 0.0


class AnswersError:
    name = "AnswersError"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        return Status(Code.ERROR, "no inventory"), 0.0


class ForgetsTheTimeout:
    name = "ForgetsTheTimeout"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return Status(Code.WAIT, "waiting")


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (WaitsZero, "a wait needs a positive, finite timeout"),
        (RejectsSilently, "without a reason"),
        (AnswersError, "permit answered Error"),
        (ForgetsTheTimeout, "it returns (Status | None, timeout_seconds)"),
    ],
)
def test_a_permit_that_answers_what_the_framework_cannot_use_fails(broken: type, message: str) -> None:
    with pytest.raises(ContractError, match=message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        assert_permit_answers(spec_of(broken, broken.__name__), clusters=CLUSTERS)


def test_the_tutorials_permit_plugin_passes_and_waits() -> None:
    report = assert_plugin_contract(module("wait_for_sibling").spec, points=["permit"], clusters=CLUSTERS)
    assert "permit answers" in report.checks and report.permit_calls > 0


# -- PreFilterExtensions ---------------------------------------------------------------------
USED: StateKey[list[int]] = StateKey("test/namespace-quota")


class NamespaceQuota:
    """At most LIMIT placed pods per namespace; Unschedulable on every node beyond it."""

    name = "NamespaceQuota"

    def pre_filter(self, state: CycleState, pod: PodInfo,
                   snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        state.write(USED, [sum(1 for p in snapshot.pods() if p.namespace == pod.namespace)])
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return OVER if state.read(USED)[0] >= LIMIT else None

    def add_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.namespace == pod_to_schedule.namespace:
            state.write(USED, [state.read(USED)[0] + 1])
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.namespace == pod_to_schedule.namespace:
            state.write(USED, [state.read(USED)[0] - 1])
        return None


class ForgetsRemovals(NamespaceQuota):
    name = "ForgetsRemovals"

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None


class MutatesSharedState(NamespaceQuota):
    """Changes the list in place: the state preemption cloned still shares it (no ``clone``)."""

    name = "MutatesSharedState"

    def remove_pod(self, state: CycleState, pod_to_schedule: PodInfo, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.namespace == pod_to_schedule.namespace:
            state.read(USED)[0] -= 1
        return None


def test_extensions_that_keep_the_state_right_pass() -> None:
    report = assert_pre_filter_extensions_agree(spec_of(NamespaceQuota, "NamespaceQuota"), clusters=CLUSTERS)
    assert report.extension_checks > 0


@pytest.mark.parametrize("broken", [ForgetsRemovals, MutatesSharedState])
def test_extensions_that_leave_another_state_than_a_fresh_pre_filter_fail(broken: type) -> None:
    with pytest.raises(ContractError, match="a fresh PreFilter with that change made says"):
        assert_pre_filter_extensions_agree(spec_of(broken, broken.__name__), clusters=CLUSTERS)


def test_the_whole_contract_runs_the_extensions_check() -> None:
    with pytest.raises(ContractError, match="add_pod/remove_pod must leave the state"):
        assert_plugin_contract(spec_of(ForgetsRemovals, "ForgetsRemovals"), points=["preFilter", "filter"],
                               clusters=CLUSTERS)


# -- the author's random clusters --------------------------------------------------------------
def test_pods_are_put_in_the_namespaces_given() -> None:
    found = {p.namespace for c in CLUSTERS for p in c.pods}
    assert found == set(NAMESPACES)
    assert CLUSTERS[0].snapshot.namespace_labels("team-b")["team"] == "b"


def test_nodes_take_the_shapes_given() -> None:
    shapes = [{"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"}, {"cpu": "2", "memory": "4Gi", "pods": "20"}]
    cluster = random_cluster(1, 0, node_shapes=shapes)
    cpus = {info.node.allocatable.milli_cpu for info in cluster.snapshot.list()}
    assert cpus <= {8000, 2000}


def test_nodes_and_pods_carry_the_annotations_given() -> None:
    clusters = random_clusters(5, node_annotations={"acme.io/window": ["open", "closed"]},
                               pod_annotations={"acme.io/maintenance": ["tolerate"]})
    assert {i.node.annotations.get("acme.io/window") for c in clusters for i in c.snapshot.list()} >= {"open", "closed"}
    assert any(p.annotations.get("acme.io/maintenance") == "tolerate" for c in clusters for p in c.pods)


def test_without_the_options_the_clusters_are_what_they_were() -> None:
    cluster = random_cluster(0, 0)
    assert {p.namespace for p in cluster.pods} <= {"default", "team-a"}
    assert all(not i.node.annotations for i in cluster.snapshot.list())
