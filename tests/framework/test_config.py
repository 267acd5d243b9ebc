"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decoding, defaults,
validation with field paths, and how a profile's plugins become a Framework
(multiPoint expansion, overrides, disabling, weights)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kubesched.framework.config import API_VERSION, KIND, ConfigError, parse_config
from kubesched.framework.profile import build_framework
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

from ..helpers import Cluster, config, framework, parse

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"


def problems(doc):
    with pytest.raises(ConfigError) as err:
        parse(doc)
    return err.value.problems


def fields(doc):
    return [f for f, _ in problems(doc)]


def build(profile, registry=None):
    return framework(Cluster(), profile, registry)


# -- defaults -------------------------------------------------------------------------------------------
def test_an_empty_configuration_has_one_default_profile_and_upstream_defaults():
    cfg = parse(config())
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
    assert cfg.percentage_of_nodes_to_score == 0  # adaptive
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1.0, 10.0)
    assert cfg.parallelism == 16
    assert cfg.profiles[0].percentage_of_nodes_to_score is None


def test_the_default_profile_runs_upstreams_plugins_in_upstreams_order():
    """Compared with the plugin lists upstream v1.36.2 recorded, minus plugins kubesched lacks."""
    expected = json.load(gzip.open(CASES / "scn-0001.json.gz"))["expected"]
    fwk = build(None)
    for point in ("preFilter", "filter", "preScore", "score"):
        assert fwk.plugin_names(point) == [p for p in expected["plugins"][point] if p not in UPSTREAM_ONLY], point
    weights = {k: v for k, v in expected["scoreWeights"].items() if k not in UPSTREAM_ONLY}
    assert {p: fwk.weights[p] for p in fwk.plugin_names("score")} == weights
    assert fwk.plugin_names("queueSort") == ["PrioritySort"]
    # DynamicResources: claims must exist; DefaultPreemption: async preemption's gate
    assert fwk.plugin_names("preEnqueue") == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert fwk.plugin_names("postFilter") == ["DynamicResources", "DefaultPreemption"]
    assert fwk.plugin_names("bind") == ["DefaultBinder"]


def test_default_plugin_args_are_filled_in():
    profile = parse(config()).profiles[0]
    fit = profile.plugin_config["NodeResourcesFit"]
    assert fit.strategy == "LeastAllocated"
    assert [(r.name, r.weight) for r in fit.resources] == [("cpu", 1), ("memory", 1)]


def test_profile_settings_are_read():
    cfg = parse(config(
        {"schedulerName": "batch", "percentageOfNodesToScore": 30},
        percentageOfNodesToScore=50, podInitialBackoffSeconds=2, podMaxBackoffSeconds=20, parallelism=4,
    ))
    assert cfg.profiles[0].scheduler_name == "batch" and cfg.profiles[0].percentage_of_nodes_to_score == 30
    assert (cfg.percentage_of_nodes_to_score, cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds, cfg.parallelism) == (50, 2.0, 20.0, 4)


def test_several_profiles_are_selected_by_scheduler_name():
    cfg = parse(config(None, profiles=[{"schedulerName": "a"}, {"schedulerName": "b"}]))
    assert cfg.profile("b").scheduler_name == "b" and cfg.profile("c") is None


# -- validation -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "doc, field",
    [
        pytest.param({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"}, "apiVersion", id="old apiVersion"),
        pytest.param({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "SchedulerConfig"}, "kind", id="wrong kind"),
        pytest.param(config(percentageOfNodeToScore=10), "percentageOfNodeToScore", id="unknown top-level field"),
        pytest.param(config({"schedulerName": "x", "plugin": {}}), "profiles[0].plugin", id="unknown profile field"),
        pytest.param(config({"plugins": {"filters": {}}}), "profiles[0].plugins.filters", id="unknown extension point"),
        pytest.param(config({"plugins": {"score": {"enabled": [{"name": "X", "wieght": 1}]}}}), "profiles[0].plugins.score.enabled[0].wieght", id="unknown plugin field"),
        pytest.param(config(percentageOfNodesToScore=101), "percentageOfNodesToScore", id="percentage above 100"),
        pytest.param(config(percentageOfNodesToScore=-1), "percentageOfNodesToScore", id="negative percentage"),
        pytest.param(config({"percentageOfNodesToScore": 200}), "profiles[0].percentageOfNodesToScore", id="profile percentage"),
        pytest.param(config(podInitialBackoffSeconds=0), "podInitialBackoffSeconds", id="zero initial backoff"),
        pytest.param(config(podInitialBackoffSeconds=5, podMaxBackoffSeconds=4), "podMaxBackoffSeconds", id="max below initial"),
        pytest.param(config(parallelism=0), "parallelism", id="zero parallelism"),
        pytest.param(config(podMaxBackoffSeconds="10s"), "podMaxBackoffSeconds", id="a string for a number"),
        pytest.param(config({"schedulerName": ""}), "profiles[0].schedulerName", id="empty scheduler name"),
        pytest.param(config(None, profiles=[{"schedulerName": "a"}, {"schedulerName": "a"}]), "profiles[1].schedulerName", id="duplicate profile"),
        pytest.param(
            config(None, profiles=[{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Custom"}], "disabled": [{"name": "*"}]}}}]),
            "profiles[1].plugins.queueSort",
            id="profiles must share the queue sort",
        ),
        pytest.param(config({"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}), "profiles[0].plugins.filter.enabled[0]", id="unknown plugin"),
        pytest.param(
            config({"plugins": {"multiPoint": {"enabled": [{"name": "NodeName"}, {"name": "NoSuchPlugin"}]}}}),
            "profiles[0].plugins.multiPoint.enabled[1]",
            id="unknown plugin in multiPoint, at its own index",
        ),
        pytest.param(
            config({"pluginConfig": [{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]}),
            "profiles[0].pluginConfig[1]",
            id="duplicate pluginConfig",
        ),
        pytest.param(
            config({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Fastest"}}}]}),
            "profiles[0].pluginConfig[0].args.scoringStrategy.type",
            id="bad args, with the path inside them",
        ),
        pytest.param(
            config({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResource": []}}]}),
            "profiles[0].pluginConfig[0].args.ignoredResource",
            id="unknown args field",
        ),
    ],
)
def test_invalid_configurations_name_the_field(doc, field):
    assert field in fields(doc)


def test_an_upstream_plugin_kubesched_lacks_may_be_disabled_but_not_enabled():
    lacking = frozenset({"UpstreamOnly"})
    enabled = config({"plugins": {"filter": {"enabled": [{"name": "UpstreamOnly"}]}}})
    with pytest.raises(ConfigError) as err:
        parse_config(enabled, in_tree_registry(), lacking)
    assert err.value.problems == [("profiles[0].plugins.filter.enabled[0]",
                                   "plugin UpstreamOnly is an upstream plugin kubesched does not implement; disable it")]
    parse_config(config({"plugins": {"filter": {"disabled": [{"name": "UpstreamOnly"}]}}}), in_tree_registry(), lacking)


def test_every_problem_is_reported_not_just_the_first():
    doc = config({"plugins": {"filter": {"enabled": [{"name": "A"}, {"name": "B"}]}}}, podInitialBackoffSeconds=0, extra=1)
    assert set(fields(doc)) >= {"profiles[0].plugins.filter.enabled[0]", "profiles[0].plugins.filter.enabled[1]", "podInitialBackoffSeconds", "extra"}


def test_error_lines_name_the_source_and_field():
    with pytest.raises(ConfigError) as err:
        from kubesched.framework.config import parse_config

        parse_config(config(parallelism=0), in_tree_registry(), UPSTREAM_ONLY, source="sched.yaml")
    assert err.value.lines()[0].startswith("sched.yaml: KubeSchedulerConfiguration parallelism: ")


def test_upstream_plugins_kubesched_lacks_may_be_disabled():
    cfg = parse(config({"plugins": {"multiPoint": {"disabled": [{"name": "VolumeBinding"}, {"name": "DynamicResources"}]}}}))
    assert cfg.profiles[0].scheduler_name == "default-scheduler"


# -- multiPoint expansion and overrides ---------------------------------------------------------------------
def test_disabling_a_plugin_in_multipoint_removes_it_everywhere():
    fwk = build({"plugins": {"multiPoint": {"disabled": [{"name": "NodeAffinity"}]}}})
    assert all("NodeAffinity" not in fwk.plugin_names(p) for p in ("preFilter", "filter", "preScore", "score"))


def test_disabling_a_plugin_at_one_point_keeps_it_at_the_others():
    fwk = build({"plugins": {"score": {"disabled": [{"name": "NodeAffinity"}]}}})
    assert "NodeAffinity" not in fwk.plugin_names("score")
    assert "NodeAffinity" in fwk.plugin_names("filter") and "NodeAffinity" in fwk.plugin_names("preScore")


def test_disabling_star_at_a_point_keeps_only_what_that_point_enables():
    fwk = build({"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}], "disabled": [{"name": "*"}]}}})
    assert fwk.plugin_names("score") == ["NodeResourcesFit"]
    assert fwk.weights["NodeResourcesFit"] == 5
    assert "TaintToleration" in fwk.plugin_names("filter")


def test_disabling_star_in_multipoint_drops_the_defaults():
    fwk = build({"plugins": {"multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "NodeName"}, {"name": "DefaultBinder"}],
                                            "disabled": [{"name": "*"}]}}})
    assert fwk.plugin_names("filter") == ["NodeName"]
    assert fwk.plugin_names("score") == []


def test_a_plugin_enabled_at_its_point_overrides_its_multipoint_entry_and_comes_first():
    fwk = build({"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 7}]}}})
    assert fwk.plugin_names("score")[0] == "ImageLocality"
    assert fwk.weights["ImageLocality"] == 7
    assert fwk.plugin_names("score").count("ImageLocality") == 1


def test_plugins_only_at_a_point_follow_the_multipoint_ones():
    profile = {"plugins": {
        "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "NodeName"}, {"name": "TaintToleration"}, {"name": "DefaultBinder"}],
                       "disabled": [{"name": "*"}]},
        "filter": {"enabled": [{"name": "NodePorts"}, {"name": "TaintToleration"}]},
    }}
    # overrides (TaintToleration) in the point's order, then multiPoint's others, then the point's others
    assert build(profile).plugin_names("filter") == ["TaintToleration", "NodeName", "NodePorts"]


def test_a_multipoint_weight_replaces_the_default_in_place():
    fwk = build({"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 9}]}}})
    assert fwk.weights["TaintToleration"] == 9
    assert fwk.plugin_names("score").index("TaintToleration") == 0


def test_a_zero_weight_means_one():
    fwk = build({"plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 0}]}}})
    assert fwk.weights["NodeAffinity"] == 1


def test_a_specific_weight_wins_over_the_multipoint_weight():
    fwk = build({"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 4}]},
                             "score": {"enabled": [{"name": "ImageLocality", "weight": 6}]}}})
    assert fwk.weights["ImageLocality"] == 6


@pytest.mark.parametrize(
    "profile, message",
    [
        pytest.param({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}, "does not extend filter plugin", id="wrong extension point"),
        pytest.param({"plugins": {"filter": {"enabled": [{"name": "NodePorts"}, {"name": "NodePorts"}]}}}, "already registered", id="twice at one point"),
        pytest.param({"plugins": {"multiPoint": {"enabled": [{"name": "NodeAffinity"}, {"name": "NodeAffinity"}]}}}, "already registered", id="twice in multiPoint"),
        pytest.param({"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}, "only one queue sort plugin", id="no queue sort"),
        pytest.param({"plugins": {"bind": {"disabled": [{"name": "*"}]}}}, "at least one bind plugin", id="no binder"),
    ],
)
def test_invalid_plugin_sets_are_rejected(profile, message):
    with pytest.raises(ConfigError) as err:
        build(profile)
    assert any(message in m for _, m in err.value.problems)


def test_out_of_tree_plugins_join_through_the_registry():
    class Custom:
        name = "Custom"

        def filter(self, state, pod, node):
            return None

    registry = in_tree_registry().merged(Registry())
    registry.add("Custom", lambda args, handle: Custom())
    fwk = build({"plugins": {"multiPoint": {"enabled": [{"name": "Custom"}]}}}, registry)
    assert fwk.plugin_names("filter")[-1] == "Custom"
    assert "Custom" not in fwk.plugin_names("score")


def test_plugin_args_reach_the_plugin():
    fwk = build({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]})
    assert fwk.plugin("NodeResourcesFit").args.strategy == "MostAllocated"


def test_build_framework_uses_one_instance_per_plugin_across_points():
    fwk = build(None)
    [filter_na] = [p for p in fwk.points["filter"] if p.name == "NodeAffinity"]
    [score_na] = [p for p in fwk.points["score"] if p.name == "NodeAffinity"]
    assert filter_na is score_na


def test_build_framework_rejects_a_profile_naming_an_unknown_plugin():
    profile = parse(config()).profiles[0]
    with pytest.raises(ConfigError):
        build_framework(profile, Registry(), None)


def test_zero_leader_election_durations_and_client_rates_are_upstreams_defaults() -> None:
    config = parse_config({"apiVersion": API_VERSION, "kind": KIND,
                           "leaderElection": {"leaseDuration": "0s", "renewDeadline": "0s", "retryPeriod": "0s",
                                              "resourceName": "kubesched"},
                           "clientConnection": {"qps": 0, "burst": 0}}, in_tree_registry())
    le = config.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (True, 15.0, 10.0, 2.0)
    assert (le.resource_name, config.qps, config.burst) == ("kubesched", 50.0, 100)
