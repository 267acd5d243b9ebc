"""Taints and tolerations (``v1.Toleration.ToleratesTaint``)."""

from __future__ import annotations

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.taints import Taint, find_untolerated_taint, parse_taints, parse_tolerations

from ..helpers import toleration


def tol(**kw):
    return parse_tolerations([toleration(**kw)], "t")[0]


GPU = Taint("gpu", "true", "NoSchedule")


@pytest.mark.parametrize(
    "t, taint, tolerated",
    [
        pytest.param(tol(operator="Exists"), GPU, True, id="empty key with Exists tolerates everything"),
        pytest.param(tol(operator="Exists"), Taint("x", "", "NoExecute"), True, id="everything incl. NoExecute"),
        pytest.param(tol(key="gpu", operator="Exists"), GPU, True, id="key with Exists ignores the value"),
        pytest.param(tol(key="gpu", value="true"), GPU, True, id="Equal is the default operator"),
        pytest.param(tol(key="gpu", operator="Equal", value="true"), GPU, True, id="Equal same value"),
        pytest.param(tol(key="gpu", operator="Equal", value="false"), GPU, False, id="Equal other value"),
        pytest.param(tol(key="gpu", operator="Equal"), GPU, False, id="Equal empty value vs set value"),
        pytest.param(tol(key="gpu", operator="Equal"), Taint("gpu", "", "NoSchedule"), True, id="Equal empty values"),
        pytest.param(tol(key="cpu", operator="Exists"), GPU, False, id="other key"),
        pytest.param(tol(key="gpu", operator="Exists", effect="NoSchedule"), GPU, True, id="same effect"),
        pytest.param(tol(key="gpu", operator="Exists", effect="NoExecute"), GPU, False, id="other effect"),
        pytest.param(tol(key="gpu", operator="Exists", effect="PreferNoSchedule"), GPU, False, id="PreferNoSchedule is its own effect"),
        pytest.param(tol(operator="Exists", effect="NoSchedule"), GPU, True, id="empty key with an effect"),
        pytest.param(tol(operator="Exists", effect="NoExecute"), GPU, False, id="empty key, other effect"),
    ],
)
def test_toleration_matching(t, taint, tolerated):
    assert t.tolerates(taint) is tolerated


def test_find_untolerated_taint_looks_only_at_the_given_effects():
    taints = parse_taints(
        [{"key": "soft", "effect": "PreferNoSchedule"}, {"key": "hard", "value": "1", "effect": "NoSchedule"}], "spec.taints"
    )
    assert find_untolerated_taint(taints, (), ("NoSchedule", "NoExecute")) == Taint("hard", "1", "NoSchedule")
    tolerations = parse_tolerations([toleration(key="hard", operator="Exists")], "t")
    assert find_untolerated_taint(taints, tolerations, ("NoSchedule", "NoExecute")) is None
    assert find_untolerated_taint(taints, tolerations, ("PreferNoSchedule",)) == Taint("soft", "", "PreferNoSchedule")


def test_the_first_untolerated_taint_is_reported():
    taints = parse_taints([{"key": "a", "effect": "NoExecute"}, {"key": "b", "effect": "NoSchedule"}], "spec.taints")
    assert find_untolerated_taint(taints, (), ("NoSchedule", "NoExecute")).key == "a"


@pytest.mark.parametrize(
    "raw, field",
    [
        ([{"key": "a", "operator": "Lt", "value": "1"}], "t[0].operator"),
        ([{"key": "a", "operator": "exists"}], "t[0].operator"),
        ([{"key": "a", "operator": "Exists", "value": "1"}], "t[0].value"),
        ([{"operator": "Equal", "value": "1"}], "t[0].operator"),
        ([{"key": "a", "effect": "Sometimes"}], "t[0].effect"),
        ([{"key": "a"}, "b"], "t[1]"),
        ({"key": "a"}, "t"),
    ],
)
def test_bad_tolerations_are_rejected_with_the_field_path(raw, field):
    with pytest.raises(ObjectError) as err:
        parse_tolerations(raw, "t")
    assert err.value.field == field


@pytest.mark.parametrize(
    "raw, field",
    [
        ([{"key": "a", "effect": "NoRun"}], "spec.taints[0].effect"),
        ([{"key": "a"}], "spec.taints[0].effect"),
        ([{"effect": "NoSchedule"}], "spec.taints[0].key"),
    ],
)
def test_bad_taints_are_rejected_with_the_field_path(raw, field):
    with pytest.raises(ObjectError) as err:
        parse_taints(raw, "spec.taints")
    assert err.value.field == field
