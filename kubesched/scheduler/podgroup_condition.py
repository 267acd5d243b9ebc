"""The ``PodGroupScheduled`` condition a pod-group cycle writes on its PodGroup.

upstream's ``updatePodGroupCondition``: True/``Scheduled`` after a feasible cycle,
False/``Unschedulable`` after a rejected one, False/``SchedulerError`` after an error; a
group once scheduled never goes back to False (a later cycle is for extra pods). The new
list is ``meta.SetStatusCondition``'s: ``lastTransitionTime`` moves only with the status,
and nothing is written when nothing changed.

The scheduler's clock is not the wall clock live, so a condition whose status changed
leaves ``last_transition_time`` None here: the writer (``PodGroupStatusWriter``) stamps it
with its own now.
"""

from __future__ import annotations

from dataclasses import replace

from ..framework.status import Status
from ..objects.podgroup import (
    POD_GROUP_SCHEDULED,
    REASON_SCHEDULED,
    REASON_SCHEDULER_ERROR,
    REASON_UNSCHEDULABLE,
    PodGroup,
    PodGroupCondition,
)

__all__ = ["condition_for", "next_conditions", "set_status_condition"]


def condition_for(status: Status | None, error_text: str) -> PodGroupCondition:
    """The condition a cycle's group status calls for (``error_text``: the error's text, for
    an error status)."""
    if status is None or status.is_success():
        return PodGroupCondition(POD_GROUP_SCHEDULED, "True", REASON_SCHEDULED, status.message if status else "")
    if status.is_rejected():
        return PodGroupCondition(POD_GROUP_SCHEDULED, "False", REASON_UNSCHEDULABLE, status.message)
    return PodGroupCondition(POD_GROUP_SCHEDULED, "False", REASON_SCHEDULER_ERROR, error_text)


def set_status_condition(conditions: tuple[PodGroupCondition, ...],
                         new: PodGroupCondition) -> tuple[PodGroupCondition, ...] | None:
    """``meta.SetStatusCondition``: ``conditions`` with ``new`` set, or None when that changes
    nothing. A condition whose status changes (or that is new) gets no transition time: the
    writer stamps it; otherwise the old one is kept."""
    for i, old in enumerate(conditions):
        if old.type != new.type:
            continue
        changed = replace(old)
        if old.status != new.status:
            changed = replace(changed, status=new.status, last_transition_time=new.last_transition_time)
        if old.reason != new.reason:
            changed = replace(changed, reason=new.reason)
        if old.message != new.message:
            changed = replace(changed, message=new.message)
        if old.observed_generation != new.observed_generation:
            changed = replace(changed, observed_generation=new.observed_generation)
        if changed == old:
            return None
        return conditions[:i] + (changed,) + conditions[i + 1:]
    return conditions + (new,)


def next_conditions(group: PodGroup, condition: PodGroupCondition) -> tuple[PodGroupCondition, ...] | None:
    """The group's conditions after a cycle that calls for ``condition``, or None when nothing
    is to be written (unchanged, or a scheduled group's True that must not regress)."""
    existing = group.condition(condition.type)
    if existing is not None and existing.status == "True" and condition.status != "True":
        return None
    condition = replace(condition, observed_generation=group.generation, last_transition_time=None)
    return set_status_condition(group.conditions, condition)
