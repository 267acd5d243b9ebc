"""NodeResourcesFit: the Filter (reasons, their order, Unschedulable vs UnschedulableAndUnresolvable,
ignored resources) and the three scoring strategies."""

from __future__ import annotations

import pytest

from kubesched.framework.args import ArgsError
from kubesched.plugins.noderesources import fit

from ..helpers import Cluster, container, filter_all, make_pod, node, pod, scores, summarise

UNSCHEDULABLE, UNRESOLVABLE = "Unschedulable", "UnschedulableAndUnresolvable"


def plugin(args=None):
    return fit.new(fit.parse_args(args), None)


def c(cpu=None, memory=None, **extra):
    return container(cpu=cpu, memory=memory, requests={k.replace("_", "-"): v for k, v in extra.items()})


def one_node(existing=(), **alloc):
    """Node "n" (defaults: 10 cpu, 20 bytes of memory, 32 pods) with bound pods given as containers."""
    spec = {"cpu": "10", "memory": "20", "pods": 32, **alloc}
    pods = [pod(f"e{i}", containers=[cont], node_name="n") for i, cont in enumerate(existing)]
    return Cluster([node("n", **spec)], pods)


# -- Filter ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "existing, alloc, wanted, expected",
    [
        pytest.param([c("5", "10")], {}, dict(containers=[c()]), None, id="no requests always fit"),
        pytest.param([c("10", "20")], {}, dict(containers=[c()]), None, id="no requests fit a full node"),
        pytest.param([c("5", "5")], {}, dict(containers=[c("1", "1")]), None, id="fits"),
        pytest.param([c("5", "5")], {}, dict(containers=[c("5", "15")]), None, id="fits exactly"),
        pytest.param(
            [c("5", "19")], {}, dict(containers=[c("6", "2")]),
            (UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
            id="cpu and memory, in that order",
        ),
        pytest.param(
            [c("9", "0")], {}, dict(containers=[c("2", "1")]),
            (UNSCHEDULABLE, ("Insufficient cpu",)),
            id="free cpu too small",
        ),
        pytest.param(
            [c("0", "19")], {}, dict(containers=[c("1", "2")]),
            (UNSCHEDULABLE, ("Insufficient memory",)),
            id="free memory too small",
        ),
        pytest.param(
            [c("8", "1")], {}, dict(containers=[c("1", "1")], init_containers=[c("3", "1")]),
            (UNSCHEDULABLE, ("Insufficient cpu",)),
            id="an init container's request counts",
        ),
        pytest.param(
            [c("8", "1")], {}, dict(containers=[c("1", "1")], overhead={"cpu": "2"}),
            (UNSCHEDULABLE, ("Insufficient cpu",)),
            id="overhead counts",
        ),
        pytest.param(
            [], {}, dict(containers=[c("11", "1")]),
            (UNRESOLVABLE, ("Insufficient cpu",)),
            id="more than the whole node is unresolvable",
        ),
        pytest.param(
            [c("1", "15")], {}, dict(containers=[c("11", "10")]),
            (UNRESOLVABLE, ("Insufficient cpu", "Insufficient memory")),
            id="one unresolvable reason makes the status unresolvable",
        ),
        pytest.param(
            [c()] * 3, {"pods": 3}, dict(containers=[c()]),
            (UNSCHEDULABLE, ("Too many pods",)),
            id="too many pods, even without requests",
        ),
        pytest.param(
            [], {"pods": 0}, dict(containers=[c()]),
            (UNSCHEDULABLE, ("Too many pods",)),
            id="a node without pod slots is only unschedulable",
        ),
        pytest.param(
            [c("9", "19")] + [c()] * 2, {"pods": 3, "ephemeral": "10"},
            dict(containers=[c("2", "2", ephemeral_storage="11", **{"example.com/b": "1", "example.com/a": "1"})]),
            (UNRESOLVABLE, ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
                            "Insufficient example.com/a", "Insufficient example.com/b")),
            id="reason order: pods, cpu, memory, ephemeral-storage, extended by name",
        ),
        pytest.param(
            [], {"ephemeral": "10"}, dict(containers=[c(ephemeral_storage="5")]), None, id="ephemeral storage fits",
        ),
        pytest.param(
            [c(ephemeral_storage="6")], {"ephemeral": "10"}, dict(containers=[c(ephemeral_storage="5")]),
            (UNSCHEDULABLE, ("Insufficient ephemeral-storage",)),
            id="ephemeral storage taken",
        ),
        pytest.param(
            [], {}, dict(containers=[c(**{"nvidia.com/gpu": "1"})]),
            (UNRESOLVABLE, ("Insufficient nvidia.com/gpu",)),
            id="an extended resource the node lacks",
        ),
        pytest.param(
            [c(**{"nvidia.com/gpu": "3"})], {"extended": {"nvidia.com/gpu": 4}}, dict(containers=[c(**{"nvidia.com/gpu": "2"})]),
            (UNSCHEDULABLE, ("Insufficient nvidia.com/gpu",)),
            id="an extended resource in use",
        ),
        pytest.param(
            [c(**{"nvidia.com/gpu": "2"})], {"extended": {"nvidia.com/gpu": 4}}, dict(containers=[c(**{"nvidia.com/gpu": "2"})]),
            None,
            id="an extended resource fits",
        ),
        pytest.param(
            [], {}, dict(containers=[c(**{"nvidia.com/gpu": "0"})]), None, id="a zero extended request is not checked",
        ),
        pytest.param(
            [], {"extended": {"hugepages-2Mi": "4Mi"}}, dict(containers=[c(**{"hugepages-2Mi": "6Mi"})]),
            (UNRESOLVABLE, ("Insufficient hugepages-2Mi",)),
            id="hugepages",
        ),
    ],
)
def test_filter(existing, alloc, wanted, expected):
    cluster = one_node(existing, **alloc)
    got = filter_all(plugin(), make_pod("p", **wanted), cluster)
    assert summarise(got) == {"n": expected}


@pytest.mark.parametrize(
    "args, fits",
    [
        pytest.param({}, False, id="not ignored"),
        pytest.param({"ignoredResources": ["example.com/foo"]}, True, id="ignoredResources"),
        pytest.param({"ignoredResources": ["example.com/bar"]}, False, id="another ignored resource"),
        pytest.param({"ignoredResourceGroups": ["example.com"]}, True, id="ignoredResourceGroups"),
        pytest.param({"ignoredResourceGroups": ["example"]}, False, id="a group is the whole domain"),
    ],
)
def test_ignored_extended_resources_are_not_checked(args, fits):
    cluster = one_node()
    got = filter_all(plugin(args), make_pod("p", containers=[c("1", **{"example.com/foo": "1"})]), cluster)
    assert summarise(got) == {"n": None if fits else (UNRESOLVABLE, ("Insufficient example.com/foo",))}


def test_ignored_resource_groups_do_not_apply_to_native_resources():
    cluster = one_node()
    got = filter_all(plugin({"ignoredResourceGroups": ["hugepages-2Mi"]}), make_pod("p", containers=[c(**{"hugepages-2Mi": "1"})]), cluster)
    assert summarise(got) == {"n": (UNRESOLVABLE, ("Insufficient hugepages-2Mi",))}


def test_filter_judges_each_node_on_its_own_usage():
    cluster = Cluster(
        [node("big", cpu="8"), node("busy", cpu="8"), node("small", cpu="1")],
        [pod("x", cpu="7", node_name="busy")],
    )
    got = filter_all(plugin(), make_pod("p", cpu="2"), cluster)
    assert summarise(got) == {
        "big": None,
        "busy": (UNSCHEDULABLE, ("Insufficient cpu",)),
        "small": (UNRESOLVABLE, ("Insufficient cpu",)),
    }


# -- Score ---------------------------------------------------------------------------------------
def score_cluster():
    # cpu in cores, memory in bytes; n1 already runs a pod of 1 cpu / 2000 bytes
    return Cluster(
        [node("n1", cpu="4", memory="10000"), node("n2", cpu="6", memory="10000")],
        [pod("x", cpu="1", memory="2000", node_name="n1")],
    )


def strategy(kind, resources=None, shape=None):
    s = {"type": kind}
    if resources is not None:
        s["resources"] = resources
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": v} for u, v in shape]}
    return {"scoringStrategy": s}


@pytest.mark.parametrize(
    "args, wanted, expected",
    [
        pytest.param(
            {}, dict(cpu="2", memory="3000"),
            # n1: cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 -> 37
            # n2: cpu (6000-2000)*100/6000 = 66, memory 70 -> 68
            {"n1": 37, "n2": 68},
            id="LeastAllocated is the default",
        ),
        pytest.param(
            strategy("LeastAllocated", [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]),
            dict(cpu="2", memory="3000"),
            {"n1": (25 * 3 + 50) // 4, "n2": (66 * 3 + 70) // 4},
            id="LeastAllocated with weights",
        ),
        pytest.param(
            {}, dict(cpu="4", memory="1000"),
            # n1: 5000m > 4000m -> cpu 0; memory 70 -> 35
            {"n1": 35, "n2": (33 + 90) // 2},
            id="LeastAllocated: over capacity scores 0",
        ),
        pytest.param(
            {}, dict(),
            # no requests: the 100m / 200Mi defaults; 200Mi > 10000 bytes of memory -> 0
            {"n1": (2900 * 100 // 4000) // 2, "n2": (5900 * 100 // 6000) // 2},
            id="LeastAllocated: a pod without requests counts 100m and 200Mi",
        ),
        pytest.param(
            strategy("MostAllocated"), dict(cpu="2", memory="3000"),
            {"n1": (75 + 50) // 2, "n2": (33 + 30) // 2},
            id="MostAllocated",
        ),
        pytest.param(
            strategy("MostAllocated"), dict(cpu="4", memory="1000"),
            {"n1": (100 + 30) // 2, "n2": (66 + 10) // 2},
            id="MostAllocated: over capacity counts as full",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), dict(cpu="1", memory="1400"),
            # utilisation n1: cpu 50, memory 34 -> (50 + 34) / 2 = 42; n2: cpu 16, memory 14 -> 15
            {"n1": 42, "n2": 15},
            id="RequestedToCapacityRatio increasing",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), dict(cpu="1", memory="1500"),
            # n1: cpu 50, memory 35 -> 42.5 rounds half away from zero to 43; n2: 16 and 15 -> 15.5 -> 16
            {"n1": 43, "n2": 16},
            id="RequestedToCapacityRatio rounds to nearest",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(0, 10), (100, 0)]), dict(cpu="1", memory="1400"),
            {"n1": 58, "n2": 85},
            id="RequestedToCapacityRatio decreasing",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(0, 0), (50, 10), (100, 0)]), dict(cpu="1", memory="1400"),
            # n1: cpu 50 -> 100, memory 34 -> 68 -> 84; n2: cpu 16 -> 32, memory 14 -> 28 -> 30
            {"n1": 84, "n2": 30},
            id="RequestedToCapacityRatio broken line",
        ),
        pytest.param(
            strategy("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), dict(cpu="0", memory="5000"),
            # n2: cpu utilisation 0 scores 0 and drops out of the average: memory 50 alone
            {"n1": (25 + 70) // 2 + 1, "n2": 50},
            id="RequestedToCapacityRatio leaves zero scores out of the average",
        ),
    ],
)
def test_score(args, wanted, expected):
    assert scores(plugin(args), make_pod("p", **wanted), score_cluster()) == expected


def test_scored_extended_resources_count_only_when_requested_and_present():
    cluster = Cluster(
        [node("gpu", cpu="4", memory="10000", extended={"nvidia.com/gpu": 4}), node("plain", cpu="4", memory="10000")]
    )
    args = strategy("MostAllocated", [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 2}])
    # requesting the GPU: gpu node (25 + 20 + 2 * 50) / 4; plain node lacks it: (25 + 20) / 2
    got = scores(plugin(args), make_pod("p", requests={"cpu": "1", "memory": "2000", "nvidia.com/gpu": "2"}), cluster)
    assert got == {"gpu": (25 + 20 + 100) // 4, "plain": (25 + 20) // 2}
    # not requesting it: the GPU is left out on both nodes
    got = scores(plugin(args), make_pod("q", cpu="1", memory="2000"), cluster)
    assert got == {"gpu": 22, "plain": 22}


def test_a_node_without_any_scored_resource_scores_zero():
    cluster = Cluster([node("n", cpu=None, memory=None)])
    assert scores(plugin(), make_pod("p", cpu="1"), cluster) == {"n": 0}


# -- args -------------------------------------------------------------------------------------------
def test_default_args():
    args = fit.parse_args(None)
    assert args.strategy == "LeastAllocated"
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]
    assert not args.ignored_resources and not args.ignored_resource_groups


def test_a_zero_resource_weight_defaults_to_one():
    args = fit.parse_args(strategy("MostAllocated", [{"name": "cpu", "weight": 0}, {"name": "memory"}]))
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]


@pytest.mark.parametrize(
    "raw, field",
    [
        ({"scoringStrategy": {"type": "Balanced"}}, "scoringStrategy.type"),
        (strategy("LeastAllocated", [{"name": "cpu", "weight": 101}]), "scoringStrategy.resources[0].weight"),
        (strategy("LeastAllocated", [{"name": "cpu", "weight": -1}]), "scoringStrategy.resources[0].weight"),
        (strategy("LeastAllocated", [{"name": "cpu", "wieght": 1}]), "scoringStrategy.resources[0].wieght"),
        ({"ignoredResourceGroups": ["example.com/foo"]}, "ignoredResourceGroups[0]"),
        ({"ignoredResources": "example.com/foo"}, "ignoredResources"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, "scoringStrategy.requestedToCapacityRatio"),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}}, "scoringStrategy.requestedToCapacityRatio.shape"),
        (strategy("RequestedToCapacityRatio", shape=[(0, 0), (101, 10)]), "scoringStrategy.requestedToCapacityRatio.shape[1].utilization"),
        (strategy("RequestedToCapacityRatio", shape=[(50, 0), (50, 10)]), "scoringStrategy.requestedToCapacityRatio.shape[1].utilization"),
        (strategy("RequestedToCapacityRatio", shape=[(0, 11)]), "scoringStrategy.requestedToCapacityRatio.shape[0].score"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_bad_args_name_the_field(raw, field):
    with pytest.raises(ArgsError) as err:
        fit.parse_args(raw)
    assert err.value.field == field


@pytest.mark.parametrize(
    "raw, field, message",
    [  # ValidateNodeResourcesFitArgs's messages, as field.Error prints them
        ({"scoringStrategy": {"type": "Balanced"}}, "scoringStrategy.type",
         'Unsupported value: "Balanced": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
        ({"scoringStrategy": {"resources": [{"name": "cpu"}]}}, "scoringStrategy.type",
         'Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
        (strategy("MostAllocated", [{"name": "cpu", "weight": 101}]), "scoringStrategy.resources[0].weight",
         "Invalid value: 101: resource weight of cpu not in valid range (0, 100]"),
        ({"ignoredResourceGroups": ["example.com/foo"]}, "ignoredResourceGroups[0]",
         """Invalid value: "example.com/foo": resource group name can't contain '/'"""),
        ({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, "scoringStrategy.requestedToCapacityRatio",
         "Required value: must be specified when type is RequestedToCapacityRatio"),
        (strategy("LeastAllocated", shape=[(0, 0)]), "scoringStrategy.requestedToCapacityRatio",
         "Forbidden: must be nil when type is not RequestedToCapacityRatio"),
        (strategy("RequestedToCapacityRatio", shape=[]), "scoringStrategy.requestedToCapacityRatio.shape",
         "Required value: at least one point must be specified"),
        (strategy("RequestedToCapacityRatio", shape=[(50, 11), (50, 10)]), "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
         "Invalid value: 50: values must be sorted in increasing order"),
        (strategy("RequestedToCapacityRatio", shape=[(0, 11)]), "scoringStrategy.requestedToCapacityRatio.shape[0].score",
         "Invalid value: 11: not in valid range [0, 10]"),
    ],
)
def test_bad_args_messages_are_upstreams(raw, field, message):
    with pytest.raises(ArgsError) as err:
        fit.parse_args(raw)
    assert (err.value.field, err.value.message) == (field, message)
