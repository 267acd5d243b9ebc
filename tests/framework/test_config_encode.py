"""The defaulted configuration written back as a v1 document (what ``kubesched config show``
prints, as upstream's ``--write-config-to`` writes it): every field, keys sorted, omitempty
fields left out, and a document that loads back to the same configuration."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubesched.framework.config import API_VERSION, KIND, parse_config, versioned_config
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry


def parse(doc: dict[str, Any]):
    return parse_config({"apiVersion": API_VERSION, "kind": KIND, **doc}, in_tree_registry(), UPSTREAM_ONLY)


def test_the_default_document_has_every_v1_field() -> None:
    doc = versioned_config(parse({}))
    assert list(doc) == sorted(doc)
    assert list(doc) == [
        "apiVersion", "clientConnection", "enableContentionProfiling", "enableProfiling", "kind", "leaderElection",
        "parallelism", "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles",
    ]  # delayCacheUntilActive and extenders are omitempty
    assert list(doc["leaderElection"]) == ["leaderElect", "leaseDuration", "renewDeadline", "resourceLock", "resourceName",
                                           "resourceNamespace", "retryPeriod"]
    assert list(doc["clientConnection"]) == ["acceptContentTypes", "burst", "contentType", "kubeconfig", "qps"]
    [profile] = doc["profiles"]
    assert list(profile) == ["pluginConfig", "plugins", "schedulerName"]
    assert list(profile["plugins"]) == sorted(profile["plugins"])  # every point, empty ones as {}
    assert profile["plugins"]["filter"] == {}


ROUND_TRIPS = [
    pytest.param({}, id="defaults"),
    pytest.param({"parallelism": 4, "percentageOfNodesToScore": 30, "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 60,
                  "delayCacheUntilActive": True, "enableProfiling": False}, id="top-level fields"),
    pytest.param({"leaderElection": {"leaderElect": False, "leaseDuration": "1m30s", "renewDeadline": "1m",
                                     "retryPeriod": "250ms", "resourceName": "kubesched", "resourceNamespace": "sched"},
                  "clientConnection": {"qps": 500, "burst": 1000, "contentType": "application/json",
                                       "acceptContentTypes": "application/json", "kubeconfig": "/etc/k.conf"}},
                 id="leader election and client connection"),
    pytest.param({"profiles": [
        {"schedulerName": "a", "percentageOfNodesToScore": 0,
         "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 5}], "disabled": [{"name": "TaintToleration"}]},
                     "multiPoint": {"disabled": [{"name": "VolumeBinding"}]}},
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                          {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                              "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In",
                                                                           "values": ["batch"]}]}]}}}},
                          {"name": "OutOfTree", "args": {"anything": 1}}]},
        {"schedulerName": "b"},
    ]}, id="profiles, plugins and args"),
    pytest.param({"extenders": [{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter", "prioritizeVerb": "prioritize",
                                 "weight": 2, "httpTimeout": "3s", "managedResources": [{"name": "example.com/gpu"}]}]},
                 id="extenders"),
]


@pytest.mark.parametrize("doc", ROUND_TRIPS)
def test_the_document_loads_back_to_the_same_configuration(doc: dict[str, Any]) -> None:
    first = versioned_config(parse(doc))
    text = yaml.safe_dump(first, sort_keys=True)
    second = versioned_config(parse_config(yaml.safe_load(text), in_tree_registry(), UPSTREAM_ONLY))
    assert second == first


def test_what_the_file_set_is_written() -> None:
    doc = versioned_config(parse(ROUND_TRIPS[2].values[0]))
    assert doc["leaderElection"] == {"leaderElect": False, "leaseDuration": "1m30s", "renewDeadline": "1m0s",
                                     "retryPeriod": "250ms", "resourceLock": "leases", "resourceName": "kubesched",
                                     "resourceNamespace": "sched"}
    assert doc["clientConnection"] == {"acceptContentTypes": "application/json", "burst": 1000,
                                       "contentType": "application/json", "kubeconfig": "/etc/k.conf", "qps": 500}


def test_profiling_off_leaves_contention_profiling_unset() -> None:
    doc = versioned_config(parse({"enableProfiling": False}))
    assert doc["enableProfiling"] is False and "enableContentionProfiling" not in doc


def test_profile_fields() -> None:
    doc = versioned_config(parse(ROUND_TRIPS[3].values[0]))
    a, b = doc["profiles"]
    assert (a["schedulerName"], a["percentageOfNodesToScore"], b["schedulerName"]) == ("a", 0, "b")
    assert "percentageOfNodesToScore" not in b
    assert a["plugins"]["score"] == {"enabled": [{"name": "ImageLocality", "weight": 5}],
                                     "disabled": [{"name": "TaintToleration"}]}
    assert "VolumeBinding" not in [p["name"] for p in a["plugins"]["multiPoint"]["enabled"]]
    names = [c["name"] for c in a["pluginConfig"]]
    assert names[:3] == ["NodeResourcesFit", "NodeAffinity", "OutOfTree"]  # the file's, in its order, then defaults
    assert "VolumeBinding" not in names  # disabled: no default args appended
    fit = a["pluginConfig"][0]["args"]
    assert fit["kind"] == "NodeResourcesFitArgs" and fit["scoringStrategy"]["type"] == "MostAllocated"
    affinity = a["pluginConfig"][1]["args"]
    assert affinity["addedAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"][0]["key"] == "pool"
    assert a["pluginConfig"][2] == {"name": "OutOfTree", "args": {"anything": 1}}
