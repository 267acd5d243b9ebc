"""The PodGroupScheduled condition a cycle writes (upstream's ``TestUpdatePodGroupCondition``):
set on an empty status, moved between False reasons and to True, never regressed from True,
``lastTransitionTime`` kept unless the status changes, ``observedGeneration`` the group's.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.status import Code, Status
from kubesched.objects.podgroup import PodGroupCondition
from kubesched.scheduler.podgroup_condition import condition_for, next_conditions

from .podgroup_support import group

EARLIER = "2026-01-01T00:00:00Z"


def existing(status: str, reason: str, message: str) -> list[dict[str, Any]]:
    return [{"type": "PodGroupScheduled", "status": status, "reason": reason, "message": message,
             "lastTransitionTime": EARLIER}]


def new(status: str, reason: str, message: str) -> PodGroupCondition:
    return PodGroupCondition("PodGroupScheduled", status, reason, message)


CASES = [
    # (name, existing conditions, new condition, expected (status, reason, message), transition kept)
    ("set Scheduled condition to True on empty status", None,
     new("True", "SomeReason", "All required pods have been successfully scheduled"),
     ("True", "SomeReason", "All required pods have been successfully scheduled"), False),
    ("set Scheduled condition to False with Unschedulable reason", None,
     new("False", "Unschedulable", "0/3 nodes are available: insufficient cpu"),
     ("False", "Unschedulable", "0/3 nodes are available: insufficient cpu"), False),
    ("set Scheduled condition to False with SchedulerError reason", None,
     new("False", "SchedulerError", "Internal scheduling error"),
     ("False", "SchedulerError", "Internal scheduling error"), False),
    ("transition from Unschedulable to Scheduled", existing("False", "Unschedulable", "previously unschedulable"),
     new("True", "Scheduled", "All required pods have been successfully scheduled"),
     ("True", "Scheduled", "All required pods have been successfully scheduled"), False),
    ("transition from SchedulerError to Scheduled", existing("False", "SchedulerError", "internal error"),
     new("True", "Scheduled", "All required pods have been successfully scheduled"),
     ("True", "Scheduled", "All required pods have been successfully scheduled"), False),
    ("do not regress Scheduled to Unschedulable", existing("True", "Scheduled", "All pods scheduled"),
     new("False", "Unschedulable", "extra pods could not be placed"), ("True", "Scheduled", "All pods scheduled"), True),
    ("do not regress Scheduled to SchedulerError", existing("True", "Scheduled", "All pods scheduled"),
     new("False", "SchedulerError", "internal error"), ("True", "Scheduled", "All pods scheduled"), True),
    ("transition from Unschedulable to SchedulerError preserves LastTransitionTime",
     existing("False", "Unschedulable", "not enough resources"), new("False", "SchedulerError", "internal error"),
     ("False", "SchedulerError", "internal error"), True),
    ("transition from SchedulerError to Unschedulable preserves LastTransitionTime",
     existing("False", "SchedulerError", "internal error"), new("False", "Unschedulable", "not enough resources"),
     ("False", "Unschedulable", "not enough resources"), True),
    ("Scheduled to Scheduled preserves LastTransitionTime", existing("True", "Scheduled", "first"),
     new("True", "Scheduled", "second"), ("True", "Scheduled", "second"), True),
]


@pytest.mark.parametrize("name, conditions, condition, expected, kept", CASES, ids=[c[0] for c in CASES])
def test_update_pod_group_condition(name: str, conditions: list[dict[str, Any]] | None, condition: PodGroupCondition,
                                    expected: tuple[str, str, str], kept: bool) -> None:
    pg = group(conditions=conditions, generation=3)
    written = next_conditions(pg, condition)
    final = pg.conditions if written is None else written
    [found] = [c for c in final if c.type == "PodGroupScheduled"]
    assert (found.status, found.reason, found.message) == expected
    if kept:
        assert found.last_transition_time == EARLIER
    else:  # a new status: the writer stamps it
        assert found.last_transition_time is None
    if written is not None:
        assert found.observed_generation == 3


def test_an_unchanged_condition_is_not_written() -> None:
    same = existing("False", "Unschedulable", "pod group is unschedulable")
    same[0]["observedGeneration"] = 1
    pg = group(conditions=same, generation=1)
    assert next_conditions(pg, new("False", "Unschedulable", "pod group is unschedulable")) is None


def test_a_new_generation_alone_is_written() -> None:
    pg = group(conditions=existing("False", "Unschedulable", "pod group is unschedulable"), generation=2)
    written = next_conditions(pg, new("False", "Unschedulable", "pod group is unschedulable"))
    assert written is not None and written[0].observed_generation == 2 and written[0].last_transition_time == EARLIER


@pytest.mark.parametrize("status, expected", [
    (None, ("True", "Scheduled", "")),
    (Status(Code.UNSCHEDULABLE, "pod group is unschedulable"), ("False", "Unschedulable", "pod group is unschedulable")),
    (Status(Code.ERROR, "boom"), ("False", "SchedulerError", "the error's text")),
], ids=["feasible", "rejected", "error"])
def test_the_condition_a_cycle_calls_for(status: Status | None, expected: tuple[str, str, str]) -> None:
    found = condition_for(status, "the error's text")
    assert (found.status, found.reason, found.message) == expected
