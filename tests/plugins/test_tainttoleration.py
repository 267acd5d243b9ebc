"""TaintToleration: untolerated NoSchedule/NoExecute taints filter a node out;
untolerated PreferNoSchedule taints score it down (normalised, reversed)."""

from __future__ import annotations

import pytest

from kubesched.plugins import tainttoleration

from ..helpers import Cluster, filter_all, make_pod, node, scores, summarise, taint, toleration

REJECTED = ("UnschedulableAndUnresolvable", ("node(s) had untolerated taint(s)",))


def plugin():
    return tainttoleration.new(None, None)


@pytest.mark.parametrize(
    "taints, tolerations, fits",
    [
        pytest.param([], [], True, id="an untainted node takes any pod"),
        pytest.param([taint("dedicated", "user1")], [], False, id="NoSchedule taint, no toleration"),
        pytest.param([taint("dedicated", "user1", "NoExecute")], [], False, id="NoExecute taint, no toleration"),
        pytest.param([taint("dedicated", "user1", "PreferNoSchedule")], [], True, id="PreferNoSchedule never filters"),
        pytest.param(
            [taint("dedicated", "user1")], [toleration("dedicated", "user1", "NoSchedule")], True, id="tolerated by key, value, effect"
        ),
        pytest.param([taint("dedicated", "user1")], [toleration("dedicated", "user2")], False, id="other value"),
        pytest.param([taint("dedicated", "user1")], [toleration("dedicated", operator="Exists")], True, id="Exists on the key"),
        pytest.param(
            [taint("dedicated", "user1")], [toleration("dedicated", "user1", "NoExecute")], False, id="tolerating another effect"
        ),
        pytest.param(
            [taint("a"), taint("b", effect="NoExecute")], [toleration("a", operator="Exists")], False, id="every taint must be tolerated"
        ),
        pytest.param(
            [taint("a"), taint("b", effect="NoExecute")],
            [toleration("a", operator="Exists"), toleration("b", operator="Exists")],
            True,
            id="all taints tolerated",
        ),
        pytest.param([taint("a"), taint("b")], [toleration(operator="Exists")], True, id="the wildcard toleration"),
    ],
)
def test_filter(taints, tolerations, fits):
    cluster = Cluster([node("n", taints=taints)])
    got = filter_all(plugin(), make_pod("p", tolerations=tolerations), cluster)
    assert summarise(got) == {"n": None if fits else REJECTED}


def soft(key, value=""):
    return taint(key, value, "PreferNoSchedule")


@pytest.mark.parametrize(
    "nodes, tolerations, expected",
    [
        pytest.param({"a": [], "b": []}, [], {"a": 100, "b": 100}, id="no taints: every node scores 100"),
        pytest.param(
            {"a": [], "b": [soft("x")], "c": [soft("x"), soft("y")]},
            [],
            {"a": 100, "b": 50, "c": 0},
            id="fewer untolerated PreferNoSchedule taints score higher",
        ),
        pytest.param(
            {"a": [soft("x")], "b": [soft("y")]},
            [toleration("x", operator="Exists", effect="PreferNoSchedule")],
            {"a": 100, "b": 0},
            id="a tolerated PreferNoSchedule taint does not count",
        ),
        pytest.param(
            {"a": [soft("x")], "b": [soft("y")]},
            [toleration("x", operator="Exists")],
            {"a": 100, "b": 0},
            id="a toleration without effect counts for scoring",
        ),
        pytest.param(
            {"a": [soft("x")], "b": [soft("y")]},
            [toleration("x", operator="Exists", effect="NoSchedule")],
            {"a": 0, "b": 0},
            id="a NoSchedule toleration does not tolerate PreferNoSchedule",
        ),
        pytest.param(
            {"a": [taint("x"), taint("y", effect="NoExecute")], "b": [soft("z")]},
            [],
            {"a": 100, "b": 0},
            id="only PreferNoSchedule taints score",
        ),
        pytest.param(
            {"a": [soft("x")], "b": [soft("x"), soft("y"), soft("z")], "c": []},
            [],
            {"a": 67, "b": 0, "c": 100},
            id="normalised against the most tainted node",
        ),
    ],
)
def test_score(nodes, tolerations, expected):
    cluster = Cluster([node(name, taints=t) for name, t in nodes.items()])
    assert scores(plugin(), make_pod("p", tolerations=tolerations), cluster) == expected
