"""Pending pods in cluster-autoscaler's equivalence groups, and the decreasing order its
estimator packs them in."""

from __future__ import annotations

from kubesched.objects.pod import parse_pod
from kubesched.planning.scale_up_groups import MAX_GROUPS_PER_CONTROLLER, decreasing_order, equivalence_groups
from tests.helpers import make_node, pod
from tests.planning.scale_up_clusters import owned


def _pod(name: str, owner: str | None = "rs", kind: str = "ReplicaSet", **kwargs: object):
    raw = pod(name, **kwargs)  # type: ignore[arg-type]
    return parse_pod(owned(raw, kind, owner) if owner else raw)


def _names(groups) -> list[list[str]]:
    return [[p.name for p in g.pods] for g in groups]


def test_pods_of_one_controller_with_equal_specs_and_labels_form_one_group():
    pods = [_pod("a", cpu="1"), _pod("b", cpu="1"), _pod("c", cpu="2")]
    assert _names(equivalence_groups(pods)) == [["a", "b"], ["c"]]


def test_pods_without_a_controller_or_of_a_daemonset_are_each_a_group():
    pods = [_pod("a", owner=None, cpu="1"), _pod("b", owner=None, cpu="1"),
            _pod("c", owner="ds", kind="DaemonSet", cpu="1"), _pod("d", owner="ds", kind="DaemonSet", cpu="1")]
    assert _names(equivalence_groups(pods)) == [["a"], ["b"], ["c"], ["d"]]


def test_environment_variables_do_not_tell_pods_apart_and_labels_do():
    with_env = pod("b", cpu="1")
    with_env["spec"]["containers"][0]["env"] = [{"name": "POD_INDEX", "value": "1"}]
    pods = [_pod("a", cpu="1"), parse_pod(owned(with_env, "ReplicaSet", "rs")), _pod("c", cpu="1", labels={"x": "y"})]
    assert _names(equivalence_groups(pods)) == [["a", "b"], ["c"]]


def test_a_controller_has_at_most_ten_groups_and_further_pods_are_groups_of_their_own():
    pods = [_pod(f"p{i}", cpu=f"{i + 1}") for i in range(MAX_GROUPS_PER_CONTROLLER + 1)]
    pods.append(_pod("again", cpu=f"{MAX_GROUPS_PER_CONTROLLER + 1}"))
    groups = equivalence_groups(pods)
    assert len(groups) == MAX_GROUPS_PER_CONTROLLER + 2
    assert _names(groups)[-2:] == [[f"p{MAX_GROUPS_PER_CONTROLLER}"], ["again"]]


def test_groups_are_packed_by_decreasing_share_of_the_template_node_keeping_queue_order_among_equals():
    template = make_node("t", cpu="4", memory="16Gi")
    pods = [_pod("small", owner="s", cpu="1", memory="1Gi"), _pod("big", owner="b", cpu="2", memory="1Gi"),
            _pod("memory", owner="m", cpu="1", memory="5Gi"), _pod("small-too", owner="t", cpu="1", memory="1Gi")]
    ordered = decreasing_order(equivalence_groups(pods), template)
    # shares: small 0.3125, big 0.5625, memory 0.5625, small-too 0.3125
    assert _names(ordered) == [["big"], ["memory"], ["small"], ["small-too"]]
