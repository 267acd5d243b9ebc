"""Defaulting, mirroring upstream's ``pkg/scheduler/apis/config/v1/defaults_test.go``
(``TestSchedulerDefaults``; each case named as upstream names it), compared on the v1
document ``versioned_config`` writes, i.e. what upstream's ``--write-config-to`` writes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.framework.config import API_VERSION, KIND, parse_config, versioned_config
from kubesched.framework.config_decode import decode_config
from kubesched.framework.config_defaults import default_config_from
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

DEFAULTS: dict[str, Any] = {
    "parallelism": 16,
    "enableProfiling": True,
    "enableContentionProfiling": True,
    "leaderElection": {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceNamespace": "kube-system",
        "resourceName": "kube-scheduler",
    },
    "clientConnection": {
        "qps": 50,
        "burst": 100,
        "contentType": "application/vnd.kubernetes.protobuf",
        "acceptContentTypes": "",
        "kubeconfig": "",
    },
    "percentageOfNodesToScore": 0,  # config.DefaultPercentageOfNodesToScore
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
}

# Upstream's default pluginConfig (``pluginConfigs``).
DEFAULT_PLUGIN_CONFIG = {
    "DefaultPreemption": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
    "DynamicResources": {"filterTimeout": "10s", "bindingTimeout": "10m0s"},
    "InterPodAffinity": {"hardPodAffinityWeight": 1},
    "NodeAffinity": {},
    "NodeResourcesBalancedAllocation": {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]},
    "NodeResourcesFit": {"scoringStrategy": {"type": "LeastAllocated",
                                             "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}},
    "PodTopologySpread": {"defaultingType": "System"},
    "VolumeBinding": {"bindTimeoutSeconds": 600},
}


def defaulted(doc: dict[str, Any]) -> dict[str, Any]:
    raw = {"apiVersion": API_VERSION, "kind": KIND, **copy.deepcopy(doc)}
    return versioned_config(parse_config(raw, in_tree_registry(), UPSTREAM_ONLY))


def expected(**changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(DEFAULTS)
    out.update(changes)
    return out


def top_level(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "profiles")}


def plugin_config(profile: dict[str, Any]) -> dict[str, Any]:
    """name -> args without the type meta, in the profile's order."""
    return {c["name"]: {k: v for k, v in (c["args"] or {}).items() if k not in ("apiVersion", "kind")}
            for c in profile.get("pluginConfig", [])}


def default_multipoint() -> list[dict[str, Any]]:
    return defaulted({})["profiles"][0]["plugins"]["multiPoint"]["enabled"]


def assert_default_plugin_config(profile: dict[str, Any]) -> None:
    got = plugin_config(profile)
    for name, args in DEFAULT_PLUGIN_CONFIG.items():
        assert {k: got[name][k] for k in args} == args, name
    assert [c["name"] for c in profile["pluginConfig"]] == sorted(DEFAULT_PLUGIN_CONFIG)  # sets.List: by name
    for c in profile["pluginConfig"]:
        assert (c["args"]["apiVersion"], c["args"]["kind"]) == (API_VERSION, c["name"] + "Args")


@pytest.mark.parametrize(
    "name, doc, want",
    [
        ("empty config", {}, expected()),
        ("no scheduler name", {"profiles": [{}]}, expected()),
        ("Prallelism with no port", {"parallelism": 16}, expected()),  # (upstream's spelling)
        ("set non default parallelism", {"parallelism": 8}, expected(parallelism=8)),
        ("set non default delayCacheUntilActive", {"delayCacheUntilActive": True}, expected(delayCacheUntilActive=True)),
        ("set non default global percentageOfNodesToScore", {"percentageOfNodesToScore": 50},
         expected(percentageOfNodesToScore=50)),
        ("set non default profile percentageOfNodesToScore", {"profiles": [{"percentageOfNodesToScore": 50}]}, expected()),
        ("set non default global and profile percentageOfNodesToScore",
         {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
         expected(percentageOfNodesToScore=10)),
    ],
)
def test_scheduler_defaults(name: str, doc: dict[str, Any], want: dict[str, Any]) -> None:
    got = defaulted(doc)
    assert top_level(got) == want
    [profile] = got["profiles"]
    assert profile["schedulerName"] == "default-scheduler"
    assert profile["plugins"]["multiPoint"]["enabled"] == default_multipoint()
    assert_default_plugin_config(profile)
    percentage = (doc.get("profiles") or [{}])[0].get("percentageOfNodesToScore")
    assert profile.get("percentageOfNodesToScore") == percentage  # nil stays nil at the profile


def defaults_only(doc: dict[str, Any]) -> dict[str, Any]:
    """SetDefaults_KubeSchedulerConfiguration alone (no validation), as upstream's test calls it."""
    problems: list[tuple[str, str]] = []
    decoded = decode_config({"apiVersion": API_VERSION, "kind": KIND, **copy.deepcopy(doc)},
                            lambda f, m: problems.append((f, m)))
    cfg = default_config_from(decoded, in_tree_registry(), lambda f, m: problems.append((f, m)))
    assert problems == []
    return versioned_config(cfg)


def test_scheduler_defaults_two_profiles() -> None:
    """"two profiles": only a lone profile is named default-scheduler; each profile's plugins merge."""
    got = defaults_only({"parallelism": 16, "profiles": [
        {"pluginConfig": [{"name": "FooPlugin"}]},
        {"schedulerName": "custom-scheduler",
         "plugins": {"bind": {"enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}}},
    ]})
    assert top_level(got) == expected()
    first, second = got["profiles"]
    assert "schedulerName" not in first  # nil: validation will require it
    assert first["plugins"]["multiPoint"]["enabled"] == default_multipoint()
    # FooPlugin's entry (no such kind: upstream keeps it undecoded) comes first, then the defaults
    assert [c["name"] for c in first["pluginConfig"]] == ["FooPlugin", *sorted(DEFAULT_PLUGIN_CONFIG)]
    assert second["schedulerName"] == "custom-scheduler"
    assert second["plugins"]["bind"] == {"enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}
    assert second["plugins"]["multiPoint"]["enabled"] == default_multipoint()
    assert_default_plugin_config(second)


def test_two_profiles_without_names_are_not_defaulted() -> None:
    """"two profiles": SchedulerName stays nil for the unnamed one, which validation then requires."""
    from kubesched.framework.config import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_config({"apiVersion": API_VERSION, "kind": KIND, "profiles": [{}, {"schedulerName": "custom-scheduler"}]},
                     in_tree_registry(), UPSTREAM_ONLY)
    assert err.value.problems == [("profiles[0].schedulerName", "Required value")]


def test_unknown_plugin_config() -> None:
    """"unknown plugin config": args of a kind upstream has not registered are kept, not decoded."""
    got = defaulted({"profiles": [{"pluginConfig": [{"name": "OutOfTree", "args": {"anything": [1, 2]}}]}]})
    [profile] = got["profiles"]
    assert profile["pluginConfig"][0] == {"name": "OutOfTree", "args": {"anything": [1, 2]}}
    assert top_level(got) == expected()


def test_explicit_args_are_defaulted_in_place() -> None:
    """A pluginConfig entry keeps its place and gets its args' defaults (scheme.Default)."""
    got = defaulted({"profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 50}},
    ]}]})
    args = plugin_config(got["profiles"][0])
    assert list(args)[:2] == ["NodeResourcesFit", "DefaultPreemption"]
    assert args["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert args["DefaultPreemption"] == {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100}


@pytest.mark.parametrize(
    "leader_election, want",
    [
        pytest.param({"leaseDuration": "0s", "renewDeadline": "0s", "retryPeriod": "0s"}, {}, id="0s is unset"),
        pytest.param({"leaderElect": False}, {"leaderElect": False}, id="leaderElect false is kept"),
        pytest.param({"resourceName": "kubesched"}, {"resourceName": "kubesched"},
                     id="leaderElect absent beside other fields is true"),
        pytest.param({"leaseDuration": "1m30s", "renewDeadline": "1.25m", "retryPeriod": "300ms"},
                     {"leaseDuration": "1m30s", "renewDeadline": "1m15s", "retryPeriod": "300ms"}, id="Go durations"),
        pytest.param({"leaseDuration": "1.5h"}, {"leaseDuration": "1h30m0s"}, id="written as Duration.String"),
        pytest.param({"resourceLock": "", "resourceNamespace": "", "resourceName": ""}, {}, id="empty strings are unset"),
    ],
)
def test_leader_election_defaults(leader_election: dict[str, Any], want: dict[str, Any]) -> None:
    """RecommendedDefaultLeaderElectionConfiguration, after the scheduler's own Lease defaults."""
    assert defaulted({"leaderElection": leader_election})["leaderElection"] == {**DEFAULTS["leaderElection"], **want}


@pytest.mark.parametrize(
    "client, want",
    [
        pytest.param({"qps": 0, "burst": 0}, {}, id="0 is unset"),
        pytest.param({"qps": 10.5, "burst": 20}, {"qps": 10.5, "burst": 20}, id="set"),
        pytest.param({"qps": -1}, {"qps": -1}, id="negative qps is kept"),
        pytest.param({"contentType": "application/json", "acceptContentTypes": "application/json"},
                     {"contentType": "application/json", "acceptContentTypes": "application/json"}, id="content types"),
        pytest.param({"kubeconfig": "/etc/kubernetes/scheduler.conf"}, {"kubeconfig": "/etc/kubernetes/scheduler.conf"},
                     id="kubeconfig"),
    ],
)
def test_client_connection_defaults(client: dict[str, Any], want: dict[str, Any]) -> None:
    assert defaulted({"clientConnection": client})["clientConnection"] == {**DEFAULTS["clientConnection"], **want}


@pytest.mark.parametrize(
    "debugging, want",
    [
        pytest.param({}, {"enableProfiling": True, "enableContentionProfiling": True}, id="profiling on by default"),
        pytest.param({"enableProfiling": False}, {"enableProfiling": False}, id="contention unset when profiling is off"),
        pytest.param({"enableProfiling": False, "enableContentionProfiling": True},
                     {"enableProfiling": False, "enableContentionProfiling": True}, id="both set"),
        pytest.param({"enableContentionProfiling": False}, {"enableProfiling": True, "enableContentionProfiling": False},
                     id="contention off"),
    ],
)
def test_debugging_defaults(debugging: dict[str, Any], want: dict[str, Any]) -> None:
    got = defaulted(debugging)
    assert {k: got[k] for k in ("enableProfiling", "enableContentionProfiling") if k in got} == want


def test_backoffs_and_percentages_nil_vs_zero() -> None:
    cfg = parse_config({"apiVersion": API_VERSION, "kind": KIND, "percentageOfNodesToScore": 0,
                        "podInitialBackoffSeconds": 3, "podMaxBackoffSeconds": 30,
                        "profiles": [{"percentageOfNodesToScore": 0}]}, in_tree_registry(), UPSTREAM_ONLY)
    assert (cfg.percentage_of_nodes_to_score, cfg.profiles[0].percentage_of_nodes_to_score) == (0, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (3.0, 30.0)
    unset = parse_config({"apiVersion": API_VERSION, "kind": KIND, "percentageOfNodesToScore": None,
                          "profiles": [{"percentageOfNodesToScore": None}]}, in_tree_registry(), UPSTREAM_ONLY)
    assert (unset.percentage_of_nodes_to_score, unset.profiles[0].percentage_of_nodes_to_score) == (0, None)


def test_null_fields_are_unset() -> None:
    """JSON null leaves a field at its zero value (a pointer nil), then defaulting fills it."""
    got = defaulted({"parallelism": None, "leaderElection": None, "clientConnection": {"qps": None},
                     "profiles": None, "extenders": None, "delayCacheUntilActive": None, "enableProfiling": None})
    assert top_level(got) == expected()
