"""NodeAffinity: nodeSelector and required node affinity filter, the PreFilter narrows to
``metadata.name`` matchFields, preferred terms score; ``addedAffinity`` applies to every pod."""

from __future__ import annotations

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins import nodeaffinity

from ..helpers import Cluster, expr, filter_all, make_pod, node, preferred_node_affinity, required_node_affinity, scores, summarise

POD = ("UnschedulableAndUnresolvable", ("node(s) didn't match Pod's node affinity/selector",))
ENFORCED = ("UnschedulableAndUnresolvable", ("node(s) didn't match scheduler-enforced node affinity",))


def plugin(args=None):
    return nodeaffinity.new(nodeaffinity.parse_args(args), None)


def cluster():
    return Cluster(
        [
            node("n1", labels={"zone": "a", "disk": "ssd", "cores": "8"}),
            node("n2", labels={"zone": "b", "disk": "hdd", "cores": "32"}),
            node("n3", labels={"zone": "b"}),
        ]
    )


def term(*exprs, fields=()):
    out = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields:
        out["matchFields"] = list(fields)
    return out


def name_is(*names):
    return expr("metadata.name", "In", *names)


@pytest.mark.parametrize(
    "spec, passing",
    [
        pytest.param({}, {"n1", "n2", "n3"}, id="no selector or affinity"),
        pytest.param({"node_selector": {"zone": "b"}}, {"n2", "n3"}, id="nodeSelector"),
        pytest.param({"node_selector": {"zone": "b", "disk": "hdd"}}, {"n2"}, id="nodeSelector pairs are ANDed"),
        pytest.param({"node_selector": {"zone": "c"}}, set(), id="nodeSelector matching nothing"),
        pytest.param({"affinity": required_node_affinity(term(expr("disk", "Exists")))}, {"n1", "n2"}, id="required Exists"),
        pytest.param({"affinity": required_node_affinity(term(expr("cores", "Gt", "10")))}, {"n2"}, id="required Gt"),
        pytest.param(
            {"affinity": required_node_affinity(term(expr("zone", "In", "a")), term(expr("disk", "DoesNotExist")))},
            {"n1", "n3"},
            id="terms are ORed",
        ),
        pytest.param(
            {"affinity": required_node_affinity(term(expr("zone", "In", "b"), expr("disk", "Exists")))},
            {"n2"},
            id="expressions in a term are ANDed",
        ),
        pytest.param(
            {"node_selector": {"zone": "b"}, "affinity": required_node_affinity(term(expr("disk", "Exists")))},
            {"n2"},
            id="nodeSelector and affinity must both hold",
        ),
        pytest.param({"affinity": required_node_affinity(term(fields=[name_is("n3")]))}, {"n3"}, id="matchFields"),
        pytest.param(
            {"affinity": required_node_affinity(term(fields=[expr("metadata.name", "NotIn", "n3")]))},
            {"n1", "n2"},
            id="matchFields NotIn",
        ),
        pytest.param({"affinity": required_node_affinity(term())}, set(), id="an empty term matches nothing"),
        pytest.param({"affinity": required_node_affinity()}, set(), id="no terms match nothing"),
    ],
)
def test_filter(spec, passing):
    got = filter_all(plugin(), make_pod("p", **spec), cluster())
    assert summarise(got) == {n: None if n in passing else POD for n in ("n1", "n2", "n3")}


def test_added_affinity_is_enforced_on_every_pod_and_reported_first():
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "In", "b"))]}}}
    got = filter_all(plugin(args), make_pod("p"), cluster())
    assert summarise(got) == {"n1": ENFORCED, "n2": None, "n3": None}
    got = filter_all(plugin(args), make_pod("q", node_selector={"disk": "ssd"}), cluster())
    assert summarise(got) == {"n1": ENFORCED, "n2": POD, "n3": POD}


# -- PreFilter ---------------------------------------------------------------------------------------
def pre_filter(pod_spec, args=None):
    return plugin(args).pre_filter(CycleState(), make_pod("p", **pod_spec), cluster().snapshot)


@pytest.mark.parametrize(
    "spec, args",
    [
        pytest.param({}, None, id="nothing to check"),
        pytest.param({"affinity": preferred_node_affinity((10, term(expr("zone", "In", "a"))))}, None, id="preferred only"),
    ],
)
def test_prefilter_skips_pods_without_required_affinity(spec, args):
    result, status = pre_filter(spec, args)
    assert result is None and status is not None and status.is_skip()


@pytest.mark.parametrize(
    "spec, args",
    [
        pytest.param({"node_selector": {"zone": "a"}}, None, id="a nodeSelector"),
        pytest.param({}, {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "Exists"))]}}}, id="addedAffinity"),
        pytest.param({"affinity": required_node_affinity(term(expr("zone", "In", "a")))}, None, id="label terms"),
        pytest.param(
            {"affinity": required_node_affinity(term(fields=[name_is("n1")]), term(expr("zone", "In", "b")))},
            None,
            id="one term without a name allows every node",
        ),
        pytest.param(
            {"affinity": required_node_affinity(term(fields=[expr("metadata.name", "NotIn", "n1")]))}, None, id="NotIn does not narrow"
        ),
    ],
)
def test_prefilter_allows_all_nodes(spec, args):
    result, status = pre_filter(spec, args)
    assert (result is None or result.all_nodes()) and (status is None or status.is_success())


@pytest.mark.parametrize(
    "terms, names",
    [
        pytest.param([term(fields=[name_is("n1")])], {"n1"}, id="one name"),
        pytest.param([term(fields=[name_is("n1")]), term(fields=[name_is("n2")])], {"n1", "n2"}, id="terms are unioned"),
        pytest.param(
            [term(expr("zone", "In", "a"), fields=[name_is("n1")])], {"n1"}, id="label expressions do not widen the set"
        ),
        pytest.param([term(fields=[name_is("n9")])], {"n9"}, id="a node that does not exist"),
    ],
)
def test_prefilter_narrows_to_named_nodes(terms, names):
    result, status = pre_filter({"affinity": required_node_affinity(*terms)})
    assert status is None or status.is_success()
    assert result.node_names == frozenset(names)


def test_prefilter_rejects_conflicting_names_in_one_term():
    t = term(fields=[name_is("n1"), name_is("n2")])
    result, status = pre_filter({"affinity": required_node_affinity(t)})
    assert status.code.label == "UnschedulableAndUnresolvable"
    assert status.reasons == ("pod affinity terms conflict",)


# -- Score -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "preferred, expected",
    [
        pytest.param([(10, term(expr("zone", "In", "a")))], {"n1": 100, "n2": 0, "n3": 0}, id="one term"),
        pytest.param(
            [(2, term(expr("zone", "In", "b"))), (3, term(expr("disk", "In", "ssd")))],
            {"n1": 100, "n2": 66, "n3": 66},
            id="weights add up and normalise to the best node",
        ),
        pytest.param(
            [(5, term(expr("zone", "In", "b"))), (5, term(expr("disk", "Exists")))],
            {"n1": 50, "n2": 100, "n3": 50},
            id="a node matching several terms sums their weights",
        ),
        pytest.param([(7, term(expr("zone", "In", "z")))], {"n1": 0, "n2": 0, "n3": 0}, id="no node matches"),
        pytest.param([(4, term(fields=[name_is("n3")]))], {"n1": 0, "n2": 0, "n3": 100}, id="matchFields"),
    ],
)
def test_score(preferred, expected):
    assert scores(plugin(), make_pod("p", affinity=preferred_node_affinity(*preferred)), cluster()) == expected


def test_added_preferred_terms_score_every_pod():
    args = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": term(expr("zone", "In", "b"))}]}}
    assert scores(plugin(args), make_pod("p"), cluster()) == {"n1": 0, "n2": 100, "n3": 100}
    pod_pref = preferred_node_affinity((3, term(expr("disk", "In", "ssd"))))
    assert scores(plugin(args), make_pod("q", affinity=pod_pref), cluster()) == {"n1": 100, "n2": 100, "n3": 100}


def test_a_pod_whose_only_preferred_term_is_empty_is_scored_not_skipped():
    c = cluster()
    pod_info = make_pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 4, "preference": {}}]}})
    status = plugin().pre_score(CycleState(), pod_info, c.snapshot, c.rows())
    assert status is None or status.is_success()
    assert scores(plugin(), pod_info, c) == {"n1": 0, "n2": 0, "n3": 0}


def test_prescore_skips_pods_without_preferred_terms():
    c = cluster()
    status = plugin().pre_score(CycleState(), make_pod("p", node_selector={"zone": "a"}), c.snapshot, c.rows())
    assert status is not None and status.is_skip()


@pytest.mark.parametrize(
    "raw, field",
    [
        ({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "Near", "a"))]}}},
         "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"),
        ({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term(expr("a", "Gt", "x"))}]}},
         "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values[0]"),
        ({"addedAffinity": {"podAffinity": {}}}, "addedAffinity.podAffinity"),
        ({"added": {}}, "added"),
    ],
)
def test_bad_args_name_the_field(raw, field):
    with pytest.raises(ArgsError) as err:
        nodeaffinity.parse_args(raw)
    assert err.value.field == field
