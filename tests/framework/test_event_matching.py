"""Which registrations hear which events: upstream's ``MatchClusterEvents``, as a table."""

from __future__ import annotations

import pytest

from kubesched.framework import ActionType as A
from kubesched.framework import ClusterEvent, EventResource as R


@pytest.mark.parametrize(
    ("registered", "incoming", "matches"),
    [
        ((R.POD, A.ADD), (R.ASSIGNED_POD, A.ADD), True),  # Pod covers assigned pods...
        ((R.POD, A.DELETE), (R.UNSCHEDULED_POD, A.DELETE), True),  # ...and unscheduled ones
        ((R.POD, A.UPDATE_POD_LABEL), (R.POD, A.UPDATE_POD_LABEL), True),
        ((R.ASSIGNED_POD, A.ADD), (R.POD, A.ADD), False),  # not the other way round
        ((R.ASSIGNED_POD, A.ADD), (R.UNSCHEDULED_POD, A.ADD), False),
        ((R.POD, A.ADD), (R.ASSIGNED_POD, A.DELETE), False),  # no action bit in common
        ((R.NODE, A.UPDATE), (R.NODE, A.UPDATE_NODE_LABEL), True),  # Update covers every kind of update
        ((R.NODE, A.UPDATE_NODE_LABEL), (R.NODE, A.UPDATE), False),  # a generic update is no label update
        ((R.NODE, A.UPDATE_NODE_ANNOTATION), (R.NODE, A.UPDATE_NODE_ANNOTATION | A.UPDATE_NODE_LABEL), True),
        ((R.NODE, A.ALL), (R.ASSIGNED_POD, A.ADD), False),
        ((R.WILDCARD, A.ALL), (R.NODE, A.DELETE), True),
        ((R.WILDCARD, A.ADD), ("podgroups.v1alpha1.scheduling.x-k8s.io", A.ADD), True),
    ],
)
def test_a_registration_hears_an_event(registered: tuple, incoming: tuple, matches: bool) -> None:
    assert ClusterEvent(*registered).matches(ClusterEvent(*incoming)) is matches
