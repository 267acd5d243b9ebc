"""Validation, mirroring upstream's ``pkg/scheduler/apis/config/validation/validation_test.go``
(``TestValidateKubeSchedulerConfigurationV1``, each case named as upstream names it) and
component-base's ``ValidateLeaderElectionConfiguration`` / ``ValidateClientConnectionConfiguration``
tests, with upstream's field paths and messages."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable

import pytest

from kubesched.framework.config import API_VERSION, KIND, ConfigError, parse_config, validate_config
from kubesched.framework.profile import build_profiles
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry
from tests.helpers import Cluster


class _Sort:
    def __init__(self, name: str) -> None:
        self.name = name

    def less(self, a: object, b: object) -> bool:
        return False


class _Bind:
    name = "CustomBind"

    def bind(self, state: object, pod: object, node: str) -> None:
        return None


def registry() -> Registry:
    extra = Registry()
    for name in ("CustomSort", "AnotherSort"):
        extra.add(name, lambda args, handle, name=name: _Sort(name))
    extra.add("CustomBind", lambda args, handle: _Bind())
    return in_tree_registry().merged(extra)


# upstream's validConfig, as the v1 file that decodes to it
VALID: dict[str, Any] = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "parallelism": 8,
    "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json", "qps": 10, "burst": 10},
    "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s", "renewDeadline": "15s",
                       "retryPeriod": "5s", "resourceNamespace": "name", "resourceName": "name"},
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "profiles": [
        {"schedulerName": "me", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "score": {"disabled": [{"name": "*"}]}},
         "pluginConfig": [{"name": "DefaultPreemption",
                           "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
        {"schedulerName": "other", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "bind": {"enabled": [{"name": "CustomBind"}]}}},
    ],
    "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
}


def problems_of(doc: dict[str, Any]) -> list[tuple[str, str]]:
    try:
        parse_config(doc, registry(), UPSTREAM_ONLY)
    except ConfigError as err:
        return err.problems
    return []


def mutate(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = copy.deepcopy(VALID)
    change(doc)
    return doc


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = doc
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    return apply


NOT_THE_SAME = "must be the same for all profiles"
QNAME_PROBLEM = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                 "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
SCENARIOS = [
    ("good", _set("parallelism", 8), []),
    ("bad-parallelism-invalid-value", _set("parallelism", 0),
     [("parallelism", "Invalid value: 0: should be an integer value greater than zero")]),
    ("bad-resource-lock-not-leases", _set("leaderElection.resourceLock", "configmap"),
     [("leaderElection.resourceLock", 'Invalid value: "configmap": resourceLock value must be "leases"')]),
    ("bad-percentage-of-nodes-to-score", _set("percentageOfNodesToScore", 101),
     [("percentageOfNodesToScore", "Invalid value: 101: not in valid range [0-100]")]),
    ("negative-percentage-of-nodes-to-score", _set("percentageOfNodesToScore", -1),
     [("percentageOfNodesToScore", "Invalid value: -1: not in valid range [0-100]")]),
    ("scheduler-name-not-set", _set("profiles.1.schedulerName", ""), [("profiles[1].schedulerName", "Required value")]),
    ("repeated-scheduler-name", _set("profiles.0.schedulerName", "other"),
     [("profiles[1].schedulerName", "Duplicate value: profiles[0].schedulerName")]),
    ("greater-than-100-profile-percentage-of-nodes-to-score", _set("profiles.1.percentageOfNodesToScore", 101),
     [("profiles[1].percentageOfNodesToScore", "Invalid value: 101: not in valid range [0-100]")]),
    ("negative-profile-percentage-of-nodes-to-score", _set("profiles.1.percentageOfNodesToScore", -1),
     [("profiles[1].percentageOfNodesToScore", "Invalid value: -1: not in valid range [0-100]")]),
    ("different-queue-sort", _set("profiles.1.plugins.queueSort.enabled.0.name", "AnotherSort"),
     [("profiles[1].plugins.queueSort", 'Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin'
                                        '{Name:"AnotherSort", Weight:0}}, Disabled:[]config.Plugin(nil)}: ' + NOT_THE_SAME)]),
    ("one-empty-queue-sort", _set("profiles.0.plugins", None),
     [("profiles[1].plugins.queueSort", 'Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin'
                                        '{Name:"CustomSort", Weight:0}}, Disabled:[]config.Plugin(nil)}: ' + NOT_THE_SAME)]),
    ("extender-negative-weight", _set("extenders.0.weight", -1),
     [("extenders[0].weight", "Invalid value: -1: must have a positive weight applied to it")]),
    ("extender-duplicate-managed-resources",
     _set("extenders.0.managedResources", [{"name": "example.com/foo"}, {"name": "example.com/foo"}]),
     [("extenders[0].managedResources[1].name", 'Invalid value: "example.com/foo": duplicate extender managed resource name')]),
    ("extender-duplicate-bind",
     _set("extenders", [{"prioritizeVerb": "prioritize", "weight": 1, "bindVerb": "foo"},
                        {"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1}]),
     [("extenders", 'Invalid value: "found 2 extenders implementing bind": only one extender can implement bind')]),
    ("invalid-node-percentage",
     _set("profiles.0.pluginConfig", [{"name": "DefaultPreemption",
                                       "args": {"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100}}]),
     [("profiles[0].pluginConfig[0].args.minCandidateNodesPercentage", "Invalid value: 200: not in valid range [0, 100]")]),
    ("invalid-plugin-args",
     _set("profiles.0.pluginConfig", [{"name": "DefaultPreemption", "args": {"kind": "InterPodAffinityArgs"}}]),
     [("profiles[0].pluginConfig[0].args", "args for plugin DefaultPreemption were not of type "
                                           "DefaultPreemptionArgs.kubescheduler.config.k8s.io, "
                                           "got InterPodAffinityArgs.kubescheduler.config.k8s.io")]),
    ("duplicated-plugin-config", _set("profiles.0.pluginConfig", [{"name": "config"}, {"name": "config"}]),
     [("profiles[0].pluginConfig[1]", 'Duplicate value: "config"')]),
    ("mismatch-queue-sort", _set("profiles", [
        {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort"}]},
        {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
         "pluginConfig": [{"name": "CustomSort"}]},
    ]), [("profiles[1].plugins.queueSort", 'Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin'
                                           '{Name:"CustomSort", Weight:0}}, Disabled:[]config.Plugin(nil)}: ' + NOT_THE_SAME)]),
    ("valid-plugins", _set("profiles.0.plugins.score.enabled", [{"name": "PodTopologySpread", "weight": 2}]), []),
    # Where kubesched and kube-scheduler once disagreed (issue 27): ValidateNodeAffinityArgs parses
    # addedAffinity's terms with labels.NewRequirement (the key must be a label key; the path has
    # no "preference"), and checks no weight range.
    ("node-affinity-added-preferred-invalid-key", _set("profiles.0.pluginConfig", [{"name": "NodeAffinity", "args": {
        "addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "bad key", "operator": "In", "values": ["a"]}]}}]}}}]),
     [("profiles[0].pluginConfig[0].args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
       ".matchExpressions[0].key", 'Invalid value: "bad key": name part ' + QNAME_PROBLEM)]),
    ("node-affinity-added-required-invalid-key", _set("profiles.0.pluginConfig", [{"name": "NodeAffinity", "args": {
        "addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "Exists"}, {"key": "a/b/c", "operator": "Exists"}]}]}}}}]),
     [("profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
       ".nodeSelectorTerms[0].matchExpressions[1].key", 'Invalid value: "a/b/c": a valid label key ' + QNAME_PROBLEM
       + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]),
    ("node-affinity-added-preferred-zero-weight-not-parsed", _set("profiles.0.pluginConfig", [{"name": "NodeAffinity", "args": {
        "addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "preference": {"matchExpressions": [{"key": "bad key", "operator": "In", "values": ["a"]}]}}]}}}]),
     []),
    ("node-affinity-added-preferred-weight-101", _set("profiles.0.pluginConfig", [{"name": "NodeAffinity", "args": {
        "addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 101, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]}}}]),
     []),
]


@pytest.mark.parametrize("name, change, want", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_validate_kube_scheduler_configuration_v1(name: str, change: Callable[[dict[str, Any]], None],
                                                    want: list[tuple[str, str]]) -> None:
    assert problems_of(mutate(change)) == want


@pytest.mark.parametrize("field", ["resourceName", "resourceNamespace", "resourceLock"])
def test_bad_resource_not_set(field: str) -> None:
    """"bad-resource-name-not-set", "bad-resource-namespace-not-set": a file cannot leave them empty
    (defaulting fills them), a command-line override can: validate_config checks again."""
    cfg = parse_config(copy.deepcopy(VALID), registry(), UPSTREAM_ONLY)
    attr = {"resourceName": "resource_name", "resourceNamespace": "resource_namespace", "resourceLock": "resource_lock"}[field]
    setattr(cfg.leader_election, attr, "")
    got = validate_config(cfg)
    assert (f"leaderElection.{field}", f'Invalid value: "": {field} is required') in got


def test_removed_plugins_are_invalid_in_v1() -> None:
    """invalidPluginsByVersion: plugins removed before v1, at a point and in pluginConfig."""
    doc = mutate(_set("profiles.0.plugins.filter", {"enabled": [{"name": "EBSLimits"}]}))
    doc["profiles"][0]["pluginConfig"].append({"name": "AzureDiskLimits"})
    detail = (f'was invalid in version "{API_VERSION}" (KubeSchedulerConfiguration is version "{API_VERSION}")')
    assert problems_of(doc) == [
        ("profiles[0].plugins.filter.enabled[0]", f'Invalid value: "EBSLimits": {detail}'),
        ("profiles[0].pluginConfig[1]", f'Invalid value: "AzureDiskLimits": {detail}'),
    ]


def test_only_one_queue_sort_plugin_can_be_enabled() -> None:
    doc = mutate(_set("profiles.0.plugins.queueSort.enabled", [{"name": "CustomSort"}, {"name": "AnotherSort"}]))
    assert ("profiles[0].plugins.queueSort.Enabled", "Invalid value: 2: only one queue sort plugin can be enabled") \
        in problems_of(doc)


# -- component-base: ValidateLeaderElectionConfiguration, ValidateClientConnectionConfiguration --------------
LEADER_ELECTION = [
    ("good", {}, []),
    ("good-dont-check-leader-config-if-not-enabled", {"leaderElect": False, "leaseDuration": "-45s"}, []),
    ("bad-renew-deadline-exceeds-lease-duration", {"renewDeadline": "45s"},
     [("leaderElection.leaseDuration", "Invalid value: 45s: LeaseDuration must be greater than RenewDeadline")]),
    ("bad-negative-value-for-retry-period", {"retryPeriod": "-45s"},
     [("leaderElection.retryPeriod", "Invalid value: -45s: must be greater than zero")]),
    ("bad-negative-value-for-lease-duration", {"leaseDuration": "-45s"},
     [("leaderElection.leaseDuration", "Invalid value: -45s: must be greater than zero"),
      ("leaderElection.leaseDuration", "Invalid value: 15s: LeaseDuration must be greater than RenewDeadline")]),
    ("bad-negative-value-for-renew-deadline", {"renewDeadline": "-45s"},
     [("leaderElection.renewDeadline", "Invalid value: -45s: must be greater than zero")]),
    ("lease-duration-equal-to-renew-deadline", {"leaseDuration": "15s"},
     [("leaderElection.leaseDuration", "Invalid value: 15s: LeaseDuration must be greater than RenewDeadline")]),
]


@pytest.mark.parametrize("name, leader_election, want", LEADER_ELECTION, ids=[c[0] for c in LEADER_ELECTION])
def test_validate_leader_election_configuration(name: str, leader_election: dict[str, Any],
                                                want: list[tuple[str, str]]) -> None:
    doc = copy.deepcopy(VALID)
    doc["leaderElection"].update(leader_election)
    assert problems_of(doc) == want


@pytest.mark.parametrize("field", ["lease_duration", "renew_deadline", "retry_period"])
def test_bad_zero_durations(field: str) -> None:
    """"bad-lease-duration-zero", "bad-renew-deadline-zero": 0s in a file means unset, an override can be 0."""
    cfg = parse_config(copy.deepcopy(VALID), registry(), UPSTREAM_ONLY)
    setattr(cfg.leader_election, field, 0.0)
    key = {"lease_duration": "leaseDuration", "renew_deadline": "renewDeadline", "retry_period": "retryPeriod"}[field]
    assert (f"leaderElection.{key}", "Invalid value: 0s: must be greater than zero") in validate_config(cfg)


@pytest.mark.parametrize(
    "name, client, want",
    [
        ("good", {}, []),
        ("good-qps-less-than-zero", {"qps": -1}, []),
        ("bad-burst-less-then-zero", {"burst": -1}, [("clientConnection.burst", "Invalid value: -1: must be non-negative")]),
    ],
)
def test_validate_client_connection_configuration(name: str, client: dict[str, Any], want: list[tuple[str, str]]) -> None:
    doc = copy.deepcopy(VALID)
    doc["clientConnection"].update(client)
    assert problems_of(doc) == want


def test_backoffs() -> None:
    assert problems_of(mutate(_set("podInitialBackoffSeconds", 0))) == [
        ("podInitialBackoffSeconds", "Invalid value: 0: must be greater than 0")]
    assert problems_of(mutate(_set("podMaxBackoffSeconds", 0))) == [
        ("podMaxBackoffSeconds", "Invalid value: 0: must be greater than or equal to PodInitialBackoffSeconds")]


def test_every_problem_is_reported_in_upstreams_order() -> None:
    doc = copy.deepcopy(VALID)
    doc.update(parallelism=0, percentageOfNodesToScore=101, podInitialBackoffSeconds=2)
    doc["clientConnection"]["burst"] = -1
    doc["leaderElection"]["resourceLock"] = "endpoints"
    doc["profiles"][1]["schedulerName"] = "me"
    assert [f for f, _ in problems_of(doc)] == [
        "clientConnection.burst", "leaderElection.resourceLock", "parallelism", "profiles[1].schedulerName",
        "percentageOfNodesToScore", "podMaxBackoffSeconds",
    ]


def test_validate_config_accepts_the_defaults() -> None:
    cfg = parse_config({"apiVersion": API_VERSION, "kind": KIND}, in_tree_registry(), UPSTREAM_ONLY)
    assert validate_config(cfg) == []
    assert validate_config(dataclasses.replace(cfg, parallelism=-2)) == [
        ("parallelism", "Invalid value: -2: should be an integer value greater than zero")]


# NewFramework's getValidScoreWeights (issue 27): each weight times MaxScore must not exceed
# MaxTotalScore (int64's largest) less the sum so far, in Go's wrapping int64 arithmetic; a
# negative weight before another score plugin wraps the difference negative: refused.
OVERFLOW = "score plugins: total score of Score plugins could overflow"
SCORE_WEIGHTS = [
    ("negative-weight-before-another-score-plugin",
     [{"name": "NodeResourcesFit", "weight": -1}, {"name": "ImageLocality", "weight": 2}], [("profiles[0].plugins.score", OVERFLOW)]),
    ("negative-weight-last", [{"name": "ImageLocality", "weight": 2}, {"name": "NodeResourcesFit", "weight": -1}], []),
    ("negative-weight-alone", [{"name": "NodeResourcesFit", "weight": -1}], []),
    ("weight-101", [{"name": "ImageLocality", "weight": 101}], []),
]


@pytest.mark.parametrize("name, enabled, want", SCORE_WEIGHTS, ids=[c[0] for c in SCORE_WEIGHTS])
def test_score_weights_that_could_overflow_are_refused(name: str, enabled: list[dict[str, Any]],
                                                       want: list[tuple[str, str]]) -> None:
    doc = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]},
        "score": {"enabled": enabled}}}]}
    reg = registry()
    cfg = parse_config(doc, reg, UPSTREAM_ONLY)
    try:
        build_profiles(cfg, reg, lambda _: Cluster().handle)
    except ConfigError as err:
        assert err.problems == want
    else:
        assert want == []


def test_a_negative_weight_before_the_default_multipoint_score_plugins_is_refused() -> None:
    """The default profile's multiPoint score plugins follow the score point's entries."""
    doc = {"apiVersion": API_VERSION, "kind": KIND, "profiles": [{"schedulerName": "default-scheduler", "plugins": {
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": -1}]}}}]}
    reg = registry()
    with pytest.raises(ConfigError) as err:
        build_profiles(parse_config(doc, reg, UPSTREAM_ONLY), reg, lambda _: Cluster().handle)
    assert err.value.problems == [("profiles[0].plugins.score", OVERFLOW)]
