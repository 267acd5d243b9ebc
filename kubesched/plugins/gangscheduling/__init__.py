"""GangScheduling (upstream's ``gangscheduling``): a gang's pods bind all together or not at all."""

from .plugin import NAME, PERMIT_TIMEOUT_SECONDS, WAITING_AT_PERMIT, WAITING_AT_PRE_ENQUEUE, GangScheduling, new

__all__ = ["NAME", "PERMIT_TIMEOUT_SECONDS", "WAITING_AT_PERMIT", "WAITING_AT_PRE_ENQUEUE", "GangScheduling", "new"]
