"""NodeResourcesBalancedAllocation (v1.36): scores how placing the pod changes the node's balance.

balance = int((1 - std(usage fractions)) * 100), with std = |f1 - f2| / 2 for two resources
and the population formula for more; fractions are requested / allocatable, capped at 1.
score = (150 + balance_after - balance_before) // 2: 75 when the balance does not change.
"""

from __future__ import annotations

import math

import pytest

from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.plugins.noderesources import balanced_allocation

from ..helpers import Cluster, container, make_pod, node, pod, scores


def plugin(args=None):
    return balanced_allocation.new(balanced_allocation.parse_args(args), None)


def balance(*fractions):
    fractions = [min(f, 1.0) for f in fractions]
    if len(fractions) == 2:
        std = abs(fractions[0] - fractions[1]) / 2
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    else:
        std = 0.0
    return int((1 - std) * 100)


def expected(before, after):
    return (150 + balance(*after) - balance(*before)) // 2


@pytest.mark.parametrize(
    "existing, wanted, score",
    [
        pytest.param([], dict(cpu="1", memory="2000"), 75, id="an empty node kept in balance scores 75"),
        pytest.param([], dict(cpu="2", memory="0"), expected((0, 0), (0.5, 0)), id="unbalancing an empty node"),
        pytest.param(
            [dict(cpu="2", memory="0")], dict(cpu="0", memory="4000"), expected((0.5, 0), (0.5, 0.5)),
            id="rebalancing a cpu-heavy node",
        ),
        pytest.param(
            [dict(cpu="1", memory="2000")], dict(cpu="1", memory="6000"), expected((0.25, 0.25), (0.5, 1.0)),
            id="memory use above the allocatable is capped at 1",
        ),
        pytest.param(
            [dict(cpu="3", memory="1000")], dict(cpu="2", memory="1000"), expected((0.75, 0.125), (1.0, 0.25)),
            id="cpu capped at 1",
        ),
        pytest.param([], dict(cpu="1"), expected((0, 0), (0.25, 0)), id="cpu only"),
    ],
)
def test_score_is_the_change_of_balance(existing, wanted, score):
    bound = [pod(f"e{i}", node_name="n", **spec) for i, spec in enumerate(existing)]
    cluster = Cluster([node("n", cpu="4", memory="8000")], bound)
    assert scores(plugin(), make_pod("p", **wanted), cluster) == {"n": score}


def test_balance_uses_plain_requests_not_the_non_zero_defaults():
    # a best-effort pod on the node adds nothing to its requested cpu or memory
    cluster = Cluster([node("n", cpu="4", memory="8000")], [pod("be", node_name="n")])
    assert scores(plugin(), make_pod("p", cpu="1", memory="2000"), cluster) == {"n": 75}


def test_a_pod_requesting_neither_resource_is_skipped():
    cluster = Cluster([node("n")])
    status = plugin().pre_score(CycleState(), make_pod("p"), cluster.snapshot, cluster.rows())
    assert status is not None and status.is_skip()


def test_a_pod_requesting_only_a_resource_outside_the_list_is_skipped():
    cluster = Cluster([node("n", extended={"nvidia.com/gpu": 2})])
    status = plugin().pre_score(CycleState(), make_pod("p", requests={"nvidia.com/gpu": "1"}), cluster.snapshot, cluster.rows())
    assert status is not None and status.is_skip()


def test_three_resources_use_the_population_standard_deviation():
    args = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}
    cluster = Cluster([node("n", cpu="4", memory="8000", extended={"nvidia.com/gpu": 4})])
    wanted = make_pod("p", containers=[container(cpu="1", memory="6000", requests={"nvidia.com/gpu": "1"})])
    assert scores(plugin(args), wanted, cluster) == {"n": expected((0, 0, 0), (0.25, 0.75, 0.25))}


def test_an_extended_resource_the_pod_does_not_request_is_left_out():
    args = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 1}]}
    cluster = Cluster([node("n", cpu="4", memory="8000", extended={"nvidia.com/gpu": 4})])
    assert scores(plugin(args), make_pod("p", cpu="2", memory="2000"), cluster) == {"n": expected((0, 0), (0.5, 0.25))}


def test_a_node_lacking_a_resource_leaves_it_out():
    cluster = Cluster([node("n", cpu="4", memory=None)])
    assert scores(plugin(), make_pod("p", cpu="2", memory="2000"), cluster) == {"n": 75}


def test_scores_differ_per_node():
    cluster = Cluster(
        [node("cpu-heavy", cpu="4", memory="8000"), node("even", cpu="4", memory="8000")],
        [pod("x", cpu="2", node_name="cpu-heavy"), pod("y", cpu="1", memory="2000", node_name="even")],
    )
    got = scores(plugin(), make_pod("p", cpu="0", memory="4000"), cluster)
    assert got == {
        "cpu-heavy": expected((0.5, 0), (0.5, 0.5)),
        "even": expected((0.25, 0.25), (0.25, 0.75)),
    }
    assert got["cpu-heavy"] > 75 > got["even"]


@pytest.mark.parametrize(
    "raw, field",
    [
        ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight"),
        ({"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]}, "resources[1].name"),
        ({"resource": []}, "resource"),
    ],
)
def test_bad_args_name_the_field(raw, field):
    with pytest.raises(ArgsError) as err:
        balanced_allocation.parse_args(raw)
    assert err.value.field == field


def test_default_args_are_cpu_and_memory():
    args = balanced_allocation.parse_args(None)
    assert [(r.name, r.weight) for r in args.resources] == [("cpu", 1), ("memory", 1)]
