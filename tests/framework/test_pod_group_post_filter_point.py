"""The PodGroupPostFilter point (upstream's ``TestPodGroupPostFilterPlugins``): with
WorkloadAwarePreemption, the profile's plugin named DefaultPreemption fills it when it
implements ``pod_group_post_filter``; nothing else ever does, and nothing does with the gate
off. Then the runner: the plugin's answer, None as Success, a raise as an Error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from kubesched.cache.cache import Cache
from kubesched.clock import VirtualClock
from kubesched.framework import DryRunSnapshot, PodGroupSchedulingFunc, Status
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.features import Features
from kubesched.framework.profile import build_framework
from kubesched.framework.runtime import Framework
from kubesched.framework.status import Code
from kubesched.objects.pod import PodInfo
from kubesched.objects.podgroup import PodGroup
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from kubesched.scheduler.handle import HandleHub

from ..helpers import make_pod

WAP = Features(enable_generic_workload=True, enable_gang_scheduling=True, enable_workload_aware_preemption=True)
GROUP = PodGroup("default", "pg", "uid-pg", 1, "1", 2)


class GroupPreempting:
    """A PostFilter plugin that also implements the pod-group point, answering ``answer``."""

    def __init__(self, name: str, answer: str = "none") -> None:
        self.name = name
        self.answer = answer
        self.calls: list[tuple[str, list[str]]] = []

    def post_filter(self, state: Any, pod: PodInfo, filtered: Any) -> tuple[None, Status]:
        return None, Status(Code.UNSCHEDULABLE, "no")

    def pod_group_post_filter(self, pod_group: PodGroup, pods: Sequence[PodInfo], schedule: PodGroupSchedulingFunc,
                              snapshot: DryRunSnapshot) -> Status | None:
        self.calls.append((pod_group.key, [p.name for p in pods]))
        if self.answer == "raise":
            raise RuntimeError("boom")
        if self.answer == "unschedulable":
            return Status(Code.UNSCHEDULABLE, "not enough resources")
        return None


class PostFilterOnly:
    def __init__(self, name: str) -> None:
        self.name = name

    def post_filter(self, state: Any, pod: PodInfo, filtered: Any) -> tuple[None, Status]:
        return None, Status(Code.UNSCHEDULABLE, "no")


def build(post_filter: str, features: Features, extra: Any = None) -> Framework:
    registry = in_tree_registry(features)
    if extra is not None:
        registry.add(extra.name, lambda args, handle: extra)
    plugins = {"multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}], "disabled": [{"name": "*"}]},
               "postFilter": {"enabled": [{"name": post_filter}]}}
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}, registry, UPSTREAM_ONLY)
    hub = HandleHub(Cache(), VirtualClock(), None)
    hub.features = features
    return build_framework(config.profiles[0], registry, hub.handle("default-scheduler"))


def test_the_gate_and_default_preemption_fill_the_point() -> None:
    fwk = build("DefaultPreemption", WAP)
    plugins = fwk.pod_group_post_filter_plugins()
    assert len(plugins) == 1 and isinstance(plugins[0], DefaultPreemption)


def test_with_the_gate_off_the_point_stays_empty() -> None:
    assert build("DefaultPreemption", Features(enable_generic_workload=True)).pod_group_post_filter_plugins() == []


def test_a_post_filter_plugin_of_another_name_never_fills_it() -> None:
    assert build("GroupPreempting", WAP, GroupPreempting("GroupPreempting")).pod_group_post_filter_plugins() == []


def test_a_default_preemption_without_the_method_does_not_fill_it() -> None:
    stand_in = PostFilterOnly("DefaultPreemption")
    fwk = Framework("p", {"postFilter": [stand_in]}, {}, instances={"DefaultPreemption": stand_in},
                    workload_aware_preemption=True)
    assert fwk.pod_group_post_filter_plugins() == []


def test_the_default_profile_s_default_preemption_fills_it() -> None:
    registry = in_tree_registry(WAP)
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND}, registry, UPSTREAM_ONLY)
    hub = HandleHub(Cache(), VirtualClock(), None)
    hub.features = WAP
    fwk = build_framework(config.profiles[0], registry, hub.handle("default-scheduler"))
    assert [p.name for p in fwk.pod_group_post_filter_plugins()] == ["DefaultPreemption"]
    assert "podGroupPostFilter" not in fwk.list_plugins()  # not a point a configuration names


@pytest.mark.parametrize("answer, code, message", [
    ("none", Code.SUCCESS, ""),
    ("unschedulable", Code.UNSCHEDULABLE, "not enough resources"),
    ("raise", Code.ERROR, "boom"),
])
def test_the_runner_hands_the_plugin_the_group_and_returns_its_answer(answer: str, code: Code, message: str) -> None:
    plugin = GroupPreempting("DefaultPreemption", answer)
    fwk = Framework("p", {"postFilter": [plugin]}, {}, instances={"DefaultPreemption": plugin},
                    workload_aware_preemption=True)
    pods = [make_pod("p1")]
    status = fwk.run_pod_group_post_filter(GROUP, pods, lambda: None, None)  # type: ignore[arg-type]
    assert (status.code, status.message, status.plugin) == (code, message, "DefaultPreemption")
    assert plugin.calls == [("default/pg", ["p1"])]
