"""An unscheduled pod's update as upstream's PodSchedulingPropertiesChange splits it."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.queue.pod_changes import UNSCHEDULED_POD_UPDATE_EVENT, pod_scheduling_properties_change
from tests.helpers import make_pod

A = ActionType
BASE: dict[str, Any] = {"cpu": "500m", "memory": "1Gi", "labels": {"app": "a"}, "gates": ["g"],
                        "tolerations": [{"key": "k", "operator": "Exists"}]}


@pytest.mark.parametrize(("change", "actions"), [
    ({}, [A.UPDATE]),
    ({"labels": {"app": "b"}}, [A.UPDATE_POD_LABEL]),
    ({"cpu": "250m"}, [A.UPDATE_POD_SCALE_DOWN]),
    ({"memory": "512Mi"}, [A.UPDATE_POD_SCALE_DOWN]),
    ({"cpu": "1"}, [A.UPDATE]),  # scaled up: nothing a waiting pod could gain
    ({"gates": []}, [A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]),
    ({"gates": ["g", "h"]}, [A.UPDATE]),
    ({"tolerations": [{"key": "k", "operator": "Exists"}, {"key": "x", "operator": "Exists"}]},
     [A.UPDATE_POD_TOLERATIONS]),
    ({"labels": {"app": "b"}, "cpu": "100m", "gates": []},
     [A.UPDATE_POD_LABEL, A.UPDATE_POD_SCALE_DOWN, A.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]),
], ids=["nothing", "labels", "cpu-down", "memory-down", "cpu-up", "gates-gone", "gate-added", "toleration-added",
        "three-kinds"])
def test_an_update_is_one_event_per_kind_of_change_in_upstreams_order(change: dict[str, Any],
                                                                       actions: list[ActionType]) -> None:
    old = make_pod("p", uid="u", **BASE)
    new = make_pod("p", uid="u", **{**BASE, **change})
    events = pod_scheduling_properties_change(old, new)
    assert [e.action for e in events] == actions
    assert all(e.resource == EventResource.POD for e in events)


def test_the_generic_update_is_upstreams_unscheduled_pod_update() -> None:
    assert pod_scheduling_properties_change(None, make_pod("p")) == [UNSCHEDULED_POD_UPDATE_EVENT]
    assert UNSCHEDULED_POD_UPDATE_EVENT.action == ActionType.UPDATE


@pytest.mark.parametrize(("registered", "heard"), [
    (A.UPDATE_POD_SCALE_DOWN, False),
    (A.UPDATE_POD_LABEL | A.UPDATE_POD_TOLERATIONS, False),
    (A.UPDATE, True),
    (A.ADD | A.UPDATE, True),
    (A.ALL, True),
])
def test_a_generic_update_is_heard_only_by_an_interest_in_the_generic_update(registered: ActionType,
                                                                            heard: bool) -> None:
    assert ClusterEvent(EventResource.POD, registered).matches(UNSCHEDULED_POD_UPDATE_EVENT) is heard


def test_a_specific_update_is_heard_by_the_generic_interest_and_its_own_kind() -> None:
    label = ClusterEvent(EventResource.POD, A.UPDATE_POD_LABEL)
    assert ClusterEvent(EventResource.POD, A.UPDATE).matches(label)
    assert ClusterEvent(EventResource.POD, A.UPDATE_POD_LABEL | A.UPDATE_POD_TOLERATIONS).matches(label)
    assert not ClusterEvent(EventResource.POD, A.UPDATE_POD_SCALE_DOWN).matches(label)
