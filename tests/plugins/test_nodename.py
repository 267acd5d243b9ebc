"""NodeName: a pod that names a node (``spec.nodeName``) fits only that node."""

from __future__ import annotations

import pytest

from kubesched.plugins import nodename

from ..helpers import Cluster, filter_all, make_pod, node, summarise

REJECTED = ("UnschedulableAndUnresolvable", ("node(s) didn't match the requested node name",))


@pytest.mark.parametrize(
    "wanted, expected",
    [
        pytest.param(None, {"n1": None, "n2": None}, id="no node name fits every node"),
        pytest.param("n1", {"n1": None, "n2": REJECTED}, id="fits only the named node"),
        pytest.param("n3", {"n1": REJECTED, "n2": REJECTED}, id="a node that does not exist fits nowhere"),
    ],
)
def test_node_name(wanted, expected):
    cluster = Cluster([node("n1"), node("n2")])
    got = filter_all(nodename.new(None, None), make_pod("p", node_name=wanted), cluster)
    assert summarise(got) == expected
