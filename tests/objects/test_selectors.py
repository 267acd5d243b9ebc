"""Label selectors (``metav1.LabelSelector``) and node selector terms (``v1.NodeSelector``)."""

from __future__ import annotations

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import parse_pod
from kubesched.objects.selectors import (
    NOTHING,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
    parse_preferred_terms,
)

from ..helpers import expr, pod, required_node_affinity

LABELS = {"app": "web", "tier": "front", "version": "7"}


@pytest.mark.parametrize(
    "selector, matches",
    [
        pytest.param({}, True, id="empty selector matches everything"),
        pytest.param({"matchLabels": {"app": "web"}}, True, id="matchLabels equal"),
        pytest.param({"matchLabels": {"app": "db"}}, False, id="matchLabels other value"),
        pytest.param({"matchLabels": {"app": "web", "tier": "back"}}, False, id="matchLabels are ANDed"),
        pytest.param({"matchLabels": {"zone": "a"}}, False, id="matchLabels missing key"),
        pytest.param({"matchExpressions": [expr("app", "In", "db", "web")]}, True, id="In"),
        pytest.param({"matchExpressions": [expr("app", "In", "db")]}, False, id="In other value"),
        pytest.param({"matchExpressions": [expr("zone", "In", "a")]}, False, id="In missing key"),
        pytest.param({"matchExpressions": [expr("app", "NotIn", "db")]}, True, id="NotIn"),
        pytest.param({"matchExpressions": [expr("app", "NotIn", "web")]}, False, id="NotIn listed value"),
        pytest.param({"matchExpressions": [expr("zone", "NotIn", "a")]}, True, id="NotIn matches a missing key"),
        pytest.param({"matchExpressions": [expr("tier", "Exists")]}, True, id="Exists"),
        pytest.param({"matchExpressions": [expr("zone", "Exists")]}, False, id="Exists missing"),
        pytest.param({"matchExpressions": [expr("zone", "DoesNotExist")]}, True, id="DoesNotExist"),
        pytest.param({"matchExpressions": [expr("app", "DoesNotExist")]}, False, id="DoesNotExist present"),
        pytest.param(
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "NotIn", "front")]},
            False,
            id="matchLabels and matchExpressions are ANDed",
        ),
    ],
)
def test_label_selector_matching(selector, matches):
    assert parse_label_selector(selector, "sel").matches(LABELS) is matches


def test_a_missing_label_selector_matches_nothing():
    sel = parse_label_selector(None, "sel")
    assert sel is NOTHING
    assert not sel.matches({})
    assert not sel.matches(LABELS)


@pytest.mark.parametrize(
    "selector, field",
    [
        ({"matchExpressions": [expr("app", "Gt", "1")]}, "sel.matchExpressions[0].operator"),
        ({"matchExpressions": [expr("app", "Equals", "1")]}, "sel.matchExpressions[0].operator"),
        ({"matchExpressions": [{"key": "app"}]}, "sel.matchExpressions[0].operator"),
        ({"matchExpressions": [expr("a", "Exists"), expr("app", "In")]}, "sel.matchExpressions[1].values"),
        ({"matchExpressions": [expr("app", "Exists", "x")]}, "sel.matchExpressions[0].values"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "sel.matchExpressions[0].key"),
        ({"matchLabels": {"app": 3}}, "sel.matchLabels.app"),
        ({"matchLabels": ["app"]}, "sel.matchLabels"),
        ({"matchExpressions": {"key": "app"}}, "sel.matchExpressions"),
        ("app=web", "sel"),
    ],
)
def test_bad_label_selectors_are_rejected_with_the_field_path(selector, field):
    with pytest.raises(ObjectError) as err:
        parse_label_selector(selector, "sel")
    assert err.value.field == field


# -- node selector terms ----------------------------------------------------------------
NODE = {"kubernetes.io/hostname": "n1", "zone": "a", "cores": "16", "gen": "v2"}


def term(*exprs, fields=()):
    out = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields:
        out["matchFields"] = list(fields)
    return out


@pytest.mark.parametrize(
    "t, matches",
    [
        pytest.param(term(expr("zone", "In", "a", "b")), True, id="In"),
        pytest.param(term(expr("zone", "NotIn", "a")), False, id="NotIn"),
        pytest.param(term(expr("gpu", "NotIn", "x")), True, id="NotIn missing key"),
        pytest.param(term(expr("zone", "Exists")), True, id="Exists"),
        pytest.param(term(expr("gpu", "DoesNotExist")), True, id="DoesNotExist"),
        pytest.param(term(expr("cores", "Gt", "8")), True, id="Gt"),
        pytest.param(term(expr("cores", "Gt", "16")), False, id="Gt is strict"),
        pytest.param(term(expr("cores", "Lt", "17")), True, id="Lt"),
        pytest.param(term(expr("cores", "Lt", "16")), False, id="Lt is strict"),
        pytest.param(term(expr("cores", "Gt", "-1")), True, id="Gt negative bound"),
        pytest.param(term(expr("gen", "Gt", "1")), False, id="Gt on a non-integer label never matches"),
        pytest.param(term(expr("gpu", "Lt", "1")), False, id="Lt on a missing label never matches"),
        pytest.param(term(expr("zone", "In", "a"), expr("cores", "Lt", "8")), False, id="expressions are ANDed"),
        pytest.param(term(fields=[expr("metadata.name", "In", "n1")]), True, id="matchFields In"),
        pytest.param(term(fields=[expr("metadata.name", "In", "n2")]), False, id="matchFields In other node"),
        pytest.param(term(fields=[expr("metadata.name", "NotIn", "n2")]), True, id="matchFields NotIn"),
        pytest.param(term(fields=[expr("metadata.name", "NotIn", "n1")]), False, id="matchFields NotIn self"),
        pytest.param(
            term(expr("zone", "In", "a"), fields=[expr("metadata.name", "In", "n2")]),
            False,
            id="expressions and fields are ANDed",
        ),
        pytest.param(term(), False, id="an empty term matches no node"),
    ],
)
def test_node_selector_term_matching(t, matches):
    assert parse_node_selector_term(t, "term").matches(NODE, "n1") is matches


@pytest.mark.parametrize("label, matches", [("1_0", False), (" 10", False), ("+10", True), ("010", True)])
def test_gt_parses_label_values_as_go_integers(label, matches):
    # strconv.ParseInt: an optional sign and decimal digits, nothing else.
    t = parse_node_selector_term(term(expr("n", "Gt", "5")), "term")
    assert t.matches({"n": label}, "x") is matches


def test_node_selector_terms_are_ored():
    sel = parse_node_selector(
        {"nodeSelectorTerms": [term(expr("zone", "In", "b")), term(expr("gen", "In", "v2"))]}, "sel"
    )
    assert sel.matches(NODE, "n1")
    assert not sel.matches({"zone": "c"}, "n1")


def test_a_node_selector_without_terms_matches_nothing():
    assert not parse_node_selector({"nodeSelectorTerms": []}, "sel").matches(NODE, "n1")


@pytest.mark.parametrize(
    "t, field",
    [
        (term(expr("zone", "Between", "a")), "term.matchExpressions[0].operator"),
        (term(expr("cores", "Gt", "8", "9")), "term.matchExpressions[0].values"),
        (term(expr("cores", "Gt")), "term.matchExpressions[0].values"),
        (term(expr("cores", "Lt", "many")), "term.matchExpressions[0].values[0]"),
        (term(expr("zone", "In")), "term.matchExpressions[0].values"),
        (term(expr("zone", "DoesNotExist", "a")), "term.matchExpressions[0].values"),
        (term(fields=[expr("metadata.name", "Exists")]), "term.matchFields[0].operator"),
        (term(fields=[expr("metadata.labels", "In", "a")]), "term.matchFields[0].key"),
        (term(fields=[expr("metadata.name", "In", "a", "b")]), "term.matchFields[0].values"),
        ({"matchExpressions": "zone"}, "term.matchExpressions"),
    ],
)
def test_bad_node_selector_terms_are_rejected_with_the_field_path(t, field):
    with pytest.raises(ObjectError) as err:
        parse_node_selector_term(t, "term")
    assert err.value.field == field


def test_an_unknown_operator_in_a_pods_node_affinity_names_the_full_path():
    raw = pod("p", affinity=required_node_affinity(term(expr("zone", "In", "a")), term(expr("zone", "Like", "a"))))
    with pytest.raises(ObjectError) as err:
        parse_pod(raw)
    assert err.value.field == (
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[1].matchExpressions[0].operator"
    )


def test_preferred_terms_keep_their_weights_and_an_empty_preference_matches_nothing():
    terms = parse_preferred_terms(
        [{"weight": 5, "preference": term(expr("zone", "In", "a"))}, {"weight": 3, "preference": {}}], "pref"
    )
    assert [t.weight for t in terms] == [5, 3]
    assert [t.term.matches(NODE, "n1") for t in terms] == [True, False]


@pytest.mark.parametrize("weight", [101, -1, "5", True])
def test_a_pods_preferred_term_weights_must_be_in_range(weight):
    with pytest.raises(ObjectError) as err:
        parse_preferred_terms([{"weight": weight, "preference": term(expr("a", "Exists"))}], "pref", pod=True)
    assert err.value.field == "pref[0].weight"


@pytest.mark.parametrize("weight, ok", [(101, True), (-1, True), (2**31, False), ("5", False), (True, False)])
def test_other_preferred_term_weights_are_any_int32(weight, ok):
    """NodeAffinity's addedAffinity: upstream checks no range, only the int32 its field holds."""
    raw = [{"weight": weight, "preference": term(expr("a", "Exists"))}]
    if ok:
        assert parse_preferred_terms(raw, "pref")[0].weight == weight
    else:
        with pytest.raises(ObjectError):
            parse_preferred_terms(raw, "pref")
