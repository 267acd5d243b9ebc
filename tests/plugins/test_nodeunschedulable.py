"""NodeUnschedulable: ``spec.unschedulable`` nodes only take pods tolerating the unschedulable taint."""

from __future__ import annotations

import pytest

from kubesched.plugins import nodeunschedulable

from ..helpers import Cluster, filter_all, make_pod, node, summarise, toleration

REJECTED = ("UnschedulableAndUnresolvable", ("node(s) were unschedulable",))
KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    "tolerations, expected",
    [
        pytest.param([], REJECTED, id="an unschedulable node rejects a plain pod"),
        pytest.param([toleration(key=KEY, operator="Exists", effect="NoSchedule")], None, id="tolerated by key and effect"),
        pytest.param([toleration(key=KEY, operator="Exists")], None, id="tolerated by key, any effect"),
        pytest.param([toleration(operator="Exists")], None, id="tolerated by the wildcard toleration"),
        pytest.param([toleration(key=KEY, operator="Exists", effect="NoExecute")], REJECTED, id="wrong effect"),
        pytest.param([toleration(key=KEY, value="true")], REJECTED, id="Equal needs the empty value"),
        pytest.param([toleration(key="other", operator="Exists")], REJECTED, id="other key"),
    ],
)
def test_unschedulable_node(tolerations, expected):
    cluster = Cluster([node("cordoned", unschedulable=True)])
    got = filter_all(nodeunschedulable.new(None, None), make_pod("p", tolerations=tolerations), cluster)
    assert summarise(got) == {"cordoned": expected}


def test_schedulable_nodes_pass_every_pod():
    cluster = Cluster([node("a"), node("b", unschedulable=True), node("c")])
    got = filter_all(nodeunschedulable.new(None, None), make_pod("p"), cluster)
    assert summarise(got) == {"a": None, "b": REJECTED, "c": None}
