"""The framework runner: PreFilter merging and Skip, Filter stopping at a node's first
failing plugin, score normalisation and weights, Reserve/Permit/Bind, and Status codes."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import NodeVerdicts, PreFilterResult
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import FrameworkError
from kubesched.framework.status import SKIP, Code, Status
from kubesched.plugins.registry import in_tree_registry

from ..helpers import Cluster, framework, make_pod, node, only

UNSCHED, UNRES = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


class Recorder:
    """A configurable plugin; records the calls it gets."""

    def __init__(self, name, calls, **behaviour):
        self.name = name
        self.calls = calls
        self.b = behaviour
        for method in ("pre_filter", "filter", "filter_nodes", "pre_score", "score", "normalize_score",
                       "reserve", "unreserve", "permit", "pre_bind", "bind", "post_bind"):
            if method not in behaviour:
                setattr(self, method, None)
            if method in behaviour or (method == "unreserve" and "reserve" in behaviour):
                setattr(self, method, getattr(self, "_" + method))
        # a None attribute means "not implemented"
        for method in list(vars(self)):
            if vars(self)[method] is None:
                delattr(self, method)

    def _pre_filter(self, state, pod, snapshot):
        self.calls.append((self.name, "pre_filter"))
        return self.b["pre_filter"]

    def _filter(self, state, pod, node):
        self.calls.append((self.name, "filter", node.name))
        return self.b["filter"].get(node.name)

    def _filter_nodes(self, state, pod, snapshot, candidates):
        self.calls.append((self.name, "filter_nodes"))
        rows = snapshot.table.name_rows()
        codes = np.zeros(snapshot.table.size, dtype=np.int32)
        statuses = []
        for name, status in self.b["filter_nodes"].items():
            statuses.append(status)
            codes[rows[name]] = len(statuses)
        return NodeVerdicts(codes, statuses)

    def _pre_score(self, state, pod, snapshot, rows):
        self.calls.append((self.name, "pre_score"))
        return self.b["pre_score"]

    def _score(self, state, pod, node):
        self.calls.append((self.name, "score", node.name))
        return self.b["score"][node.name]

    def _normalize_score(self, state, pod, scores):
        return self.b["normalize_score"](scores)

    def _reserve(self, state, pod, node_name):
        self.calls.append((self.name, "reserve"))
        return self.b["reserve"]

    def _unreserve(self, state, pod, node_name):
        self.calls.append((self.name, "unreserve"))

    def _permit(self, state, pod, node_name):
        self.calls.append((self.name, "permit"))
        return self.b["permit"]

    def _pre_bind(self, state, pod, node_name):
        self.calls.append((self.name, "pre_bind"))
        return self.b["pre_bind"]

    def _bind(self, state, pod, node_name):
        self.calls.append((self.name, "bind"))
        return self.b["bind"]

    def _post_bind(self, state, pod, node_name):
        self.calls.append((self.name, "post_bind"))


def cluster3():
    return Cluster([node("n1"), node("n2"), node("n3")])


def build(cluster, plugins, points=None, weights=None):
    """A framework of custom plugins: ``plugins`` name -> Recorder; ``points`` point -> names."""
    registry = in_tree_registry().merged(Registry())
    for name, plugin in plugins.items():
        registry.add(name, lambda args, handle, p=plugin: p)
    profile = only(*[n for n in plugins if not points])
    if points:
        for point, names in points.items():
            profile["plugins"][point] = {"enabled": [{"name": n, "weight": (weights or {}).get(n, 0)} for n in names],
                                         "disabled": [{"name": "*"}]}
    elif weights:
        profile["plugins"]["multiPoint"]["enabled"] = [
            {"name": e["name"], "weight": weights.get(e["name"], 0)} for e in profile["plugins"]["multiPoint"]["enabled"]
        ]
    return framework(cluster, profile, registry)


def rejected(status, *reasons):
    return Status(status, *reasons)


# -- PreFilter -----------------------------------------------------------------------------------------
def test_prefilter_results_intersect():
    calls = []
    plugins = {
        "A": Recorder("A", calls, pre_filter=(PreFilterResult(frozenset({"n1", "n2"})), None)),
        "B": Recorder("B", calls, pre_filter=(PreFilterResult(frozenset({"n2", "n3"})), None)),
        "C": Recorder("C", calls, pre_filter=(None, None)),
    }
    c = cluster3()
    result, status, narrowing = build(c, plugins).run_pre_filter(CycleState(), make_pod("p"), c.snapshot)
    assert status is None and result.node_names == frozenset({"n2"})
    assert narrowing == ["A", "B"]


@pytest.mark.parametrize(
    "sets, message",
    [
        pytest.param({"B": {"n1"}, "A": {"n2"}}, "node(s) didn't satisfy plugin(s) [A B] simultaneously", id="two plugins, sorted"),
        pytest.param({"A": set()}, "node(s) didn't satisfy plugin A", id="one plugin allowing no node"),
    ],
)
def test_prefilter_results_with_no_common_node_reject_the_pod(sets, message):
    calls = []
    plugins = {name: Recorder(name, calls, pre_filter=(PreFilterResult(frozenset(s)), None)) for name, s in sets.items()}
    c = cluster3()
    _, status, _ = build(c, plugins).run_pre_filter(CycleState(), make_pod("p"), c.snapshot)
    assert status.code == UNRES and status.reasons == (message,)


def test_an_unresolvable_prefilter_stops_the_rest():
    calls = []
    plugins = {
        "A": Recorder("A", calls, pre_filter=(None, Status(UNRES, "no way"))),
        "B": Recorder("B", calls, pre_filter=(None, None)),
    }
    c = cluster3()
    _, status, _ = build(c, plugins).run_pre_filter(CycleState(), make_pod("p"), c.snapshot)
    assert (status.code, status.plugin, status.reasons) == (UNRES, "A", ("no way",))
    assert calls == [("A", "pre_filter")]


def test_an_unschedulable_prefilter_lets_the_others_run():
    calls = []
    plugins = {
        "A": Recorder("A", calls, pre_filter=(None, Status(UNSCHED, "not now"))),
        "B": Recorder("B", calls, pre_filter=(None, None)),
    }
    c = cluster3()
    _, status, _ = build(c, plugins).run_pre_filter(CycleState(), make_pod("p"), c.snapshot)
    assert (status.code, status.plugin) == (UNSCHED, "A")
    assert calls == [("A", "pre_filter"), ("B", "pre_filter")]


def test_a_prefilter_error_is_an_error():
    plugins = {"A": Recorder("A", [], pre_filter=(None, Status(Code.ERROR, "boom")))}
    c = cluster3()
    _, status, _ = build(c, plugins).run_pre_filter(CycleState(), make_pod("p"), c.snapshot)
    assert status.code == Code.ERROR and "boom" in status.message and status.plugin == "A"


def test_a_plugin_whose_prefilter_skips_is_not_filtered():
    calls = []
    plugins = {"A": Recorder("A", calls, pre_filter=(None, SKIP), filter={"n1": Status(UNSCHED, "no")})}
    c = cluster3()
    fwk = build(c, plugins)
    state = CycleState()
    fwk.run_pre_filter(state, make_pod("p"), c.snapshot)
    outcome = fwk.run_filters(state, make_pod("p"), c.snapshot, c.cache.table.alive[: c.cache.table.size].copy())
    assert outcome.passed[c.rows()].all()
    assert ("A", "filter", "n1") not in calls


# -- Filter --------------------------------------------------------------------------------------------
def test_filtering_a_node_stops_at_its_first_failing_plugin():
    calls = []
    plugins = {
        "A": Recorder("A", calls, filter={"n1": Status(UNSCHED, "a says no")}),
        "B": Recorder("B", calls, filter={"n1": Status(UNRES, "b says no"), "n2": Status(UNRES, "b says no")}),
    }
    c = cluster3()
    outcome = build(c, plugins).run_filters(CycleState(), make_pod("p"), c.snapshot, c.cache.table.alive[: c.cache.table.size].copy())
    rows = c.cache.table.name_rows()
    assert outcome.status_of(rows["n1"]) == Status(UNSCHED, "a says no", plugin="A")
    assert outcome.status_of(rows["n2"]) == Status(UNRES, "b says no", plugin="B")
    assert outcome.status_of(rows["n3"]) is None
    assert ("B", "filter", "n1") not in calls and ("B", "filter", "n2") in calls


def test_batch_filters_stop_at_the_first_failure_too():
    calls = []
    plugins = {
        "A": Recorder("A", calls, filter_nodes={"n2": Status(UNSCHED, "a")}),
        "B": Recorder("B", calls, filter_nodes={"n2": Status(UNRES, "b"), "n3": Status(UNRES, "b")}),
    }
    c = cluster3()
    outcome = build(c, plugins).run_filters(CycleState(), make_pod("p"), c.snapshot, c.cache.table.alive[: c.cache.table.size].copy())
    rows = c.cache.table.name_rows()
    assert [outcome.status_of(rows[n]) for n in ("n1", "n2", "n3")] == [
        None, Status(UNSCHED, "a", plugin="A"), Status(UNRES, "b", plugin="B")]


def test_a_filter_error_fails_the_cycle():
    plugins = {"A": Recorder("A", [], filter={"n2": Status(Code.ERROR, "disk on fire")})}
    c = cluster3()
    with pytest.raises(FrameworkError, match="disk on fire"):
        build(c, plugins).run_filters(CycleState(), make_pod("p"), c.snapshot, c.cache.table.alive[: c.cache.table.size].copy())


def test_only_candidate_nodes_are_filtered():
    calls = []
    plugins = {"A": Recorder("A", calls, filter={})}
    c = cluster3()
    candidates = np.zeros(c.cache.table.size, dtype=bool)
    candidates[c.cache.table.name_rows()["n2"]] = True
    build(c, plugins).run_filters(CycleState(), make_pod("p"), c.snapshot, candidates)
    assert calls == [("A", "filter", "n2")]


# -- Score ---------------------------------------------------------------------------------------------
def score_rows(c):
    return c.rows(["n1", "n2", "n3"])


def test_scores_are_normalised_then_weighted_and_summed():
    plugins = {
        "A": Recorder("A", [], score={"n1": 10, "n2": 20, "n3": 40}, normalize_score=lambda s: s * 100 // s.max()),
        "B": Recorder("B", [], score={"n1": 100, "n2": 0, "n3": 50}),
    }
    c = cluster3()
    out = build(c, plugins, weights={"A": 2, "B": 3}).run_score(CycleState(), make_pod("p"), c.snapshot, score_rows(c))
    assert out.by_plugin["A"].tolist() == [50, 100, 200]
    assert out.by_plugin["B"].tolist() == [300, 0, 150]
    assert out.total.tolist() == [350, 100, 350]


def test_a_plugin_whose_prescore_skips_does_not_score():
    calls = []
    plugins = {
        "A": Recorder("A", calls, pre_score=SKIP, score={"n1": 1, "n2": 1, "n3": 1}),
        "B": Recorder("B", calls, pre_score=None, score={"n1": 5, "n2": 6, "n3": 7}),
    }
    c = cluster3()
    fwk = build(c, plugins)
    state = CycleState()
    assert fwk.run_pre_score(state, make_pod("p"), c.snapshot, score_rows(c)) is None
    out = fwk.run_score(state, make_pod("p"), c.snapshot, score_rows(c))
    assert list(out.by_plugin) == ["B"] and out.total.tolist() == [5, 6, 7]
    assert not any(call[:2] == ("A", "score") for call in calls)


def test_a_prescore_failure_is_an_error():
    plugins = {"A": Recorder("A", [], pre_score=Status(UNSCHED, "no"), score={})}
    c = cluster3()
    status = build(c, plugins).run_pre_score(CycleState(), make_pod("p"), c.snapshot, score_rows(c))
    assert status.code == Code.ERROR


@pytest.mark.parametrize("bad", [101, -1])
def test_a_score_out_of_range_after_normalising_fails(bad):
    plugins = {"A": Recorder("A", [], score={"n1": bad, "n2": 0, "n3": 0})}
    c = cluster3()
    with pytest.raises(FrameworkError, match="invalid score"):
        build(c, plugins).run_score(CycleState(), make_pod("p"), c.snapshot, score_rows(c))


# -- Reserve, Permit, Bind --------------------------------------------------------------------------------
def test_unreserve_runs_in_reverse_order():
    calls = []
    plugins = {"A": Recorder("A", calls, reserve=None), "B": Recorder("B", calls, reserve=None)}
    c = cluster3()
    build(c, plugins, points={"reserve": ["A", "B"]}).run_unreserve(CycleState(), make_pod("p"), "n1")
    assert calls == [("B", "unreserve"), ("A", "unreserve")]


def test_a_rejecting_reserve_stops_and_names_its_plugin():
    calls = []
    plugins = {"A": Recorder("A", calls, reserve=Status(UNSCHED, "full")), "B": Recorder("B", calls, reserve=None)}
    c = cluster3()
    status = build(c, plugins, points={"reserve": ["A", "B"]}).run_reserve(CycleState(), make_pod("p"), "n1")
    assert (status.code, status.plugin) == (UNSCHED, "A")
    assert calls == [("A", "reserve")]


def test_a_rejecting_permit_names_its_plugin():
    plugins = {"A": Recorder("A", [], permit=(Status(UNRES, "denied"), 0))}
    c = cluster3()
    status, _ = build(c, plugins, points={"permit": ["A"]}).run_permit(CycleState(), make_pod("p"), "n1")
    assert (status.code, status.plugin, status.reasons) == (UNRES, "A", ("denied",))


def test_a_permit_error_is_an_error():
    plugins = {"A": Recorder("A", [], permit=(Status(Code.ERROR, "x"), 0))}
    c = cluster3()
    status, _ = build(c, plugins, points={"permit": ["A"]}).run_permit(CycleState(), make_pod("p"), "n1")
    assert status.code == Code.ERROR


def test_the_first_bind_plugin_that_does_not_skip_binds():
    calls = []
    plugins = {"A": Recorder("A", calls, bind=SKIP), "B": Recorder("B", calls, bind=None), "C": Recorder("C", calls, bind=None)}
    c = cluster3()
    status = build(c, plugins, points={"bind": ["A", "B", "C"]}).run_bind(CycleState(), make_pod("p"), "n1")
    assert status is None or status.is_success()
    assert calls == [("A", "bind"), ("B", "bind")]


def test_a_rejecting_prebind_names_its_plugin():
    plugins = {"A": Recorder("A", [], pre_bind=Status(UNSCHED, "volume not ready"))}
    c = cluster3()
    status = build(c, plugins, points={"preBind": ["A"]}).run_pre_bind(CycleState(), make_pod("p"), "n1")
    assert (status.code, status.plugin) == (UNSCHED, "A")


# -- Status -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "code, label, rejected",
    [
        (Code.SUCCESS, "Success", False),
        (Code.ERROR, "Error", False),
        (Code.UNSCHEDULABLE, "Unschedulable", True),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable", True),
        (Code.WAIT, "Wait", False),
        (Code.SKIP, "Skip", False),
        (Code.PENDING, "Pending", True),
    ],
)
def test_status_codes(code, label, rejected):
    status = Status(code, "r1", "r2")
    assert status.code.label == label
    assert status.is_rejected() is rejected
    assert status.message == "r1, r2"
    assert status.with_plugin("X").plugin == "X" and status.with_plugin("X").reasons == ("r1", "r2")


def test_statuses_compare_by_code_reasons_and_plugin():
    assert Status(UNSCHED, "a", plugin="P") == Status(UNSCHED, "a", plugin="P")
    assert Status(UNSCHED, "a", plugin="P") != Status(UNRES, "a", plugin="P")
    assert Status(UNSCHED, "a", plugin="P") != Status(UNSCHED, "a", plugin="Q")
    assert Status.as_error(ValueError("bad")).code == Code.ERROR
