"""DynamicResources' PostFilter (upstream's ``PostFilter``).

When no node fits: deallocate one claim that was unavailable on some node and that no
other pod uses, or delete the extended-resource claim an earlier cycle created, so that
the next attempt starts afresh; otherwise ``no new claims to deallocate``. The writes go
in the background (the scheduling cycle never waits on the API). Apart from the plugin
because it only runs after a failed cycle.
"""

from __future__ import annotations

from ...framework import Code, CycleState, NodeToStatusReader, PostFilterResult, Status
from ...objects.pod import PodInfo
from .binding import BindingMixin
from .names import ERR_NOTHING_TO_DEALLOCATE, NAME, SPECIAL_CLAIM_NAME
from .state import STATE

__all__ = ["PostFilterMixin"]


class PostFilterMixin(BindingMixin):
    def post_filter(self, state: CycleState, pod: PodInfo, filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE, "plugin disabled")
        s = state.get(STATE)
        if s is None:
            return None, Status(Code.ERROR, f"error reading {NAME!r} from cycle-state: not found")
        if s.empty():
            return None, Status(Code.UNSCHEDULABLE, ERR_NOTHING_TO_DEALLOCATE)
        ext = s.extended_claim()
        ext_index = s.extended_index()
        client = self.writer()
        for index in sorted(s.unavailable):  # upstream picks one at random; the first, here
            claim = s.claims[index]
            if index == ext_index:
                if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
                    break
                continue
            refs = claim.status.reserved_for
            if not refs or (len(refs) == 1 and refs[0].uid == pod.uid):
                raw = self.manager.raw_claim(claim)
                if client is None or raw is None:
                    return None, Status(Code.ERROR, "deallocating a claim needs a cluster client that writes claims")
                client.deallocate_resource_claim(raw)
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
        if ext is not None and ext.name != SPECIAL_CLAIM_NAME:
            raw = self.manager.raw_claim(ext)
            if client is None or raw is None:
                return None, Status(Code.ERROR, "deleting a claim needs a cluster client that writes claims")
            # In the background: PostFilter runs in the scheduling cycle, which never waits on the API.
            client.delete_resource_claim_in_background(raw)
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")
