"""``GroupCycleLists``: the lists upstream's per-cycle snapshot leaves as a pod-group cycle found them.

Upstream runs a pod group's cycle on one snapshot (``podGroupCycle`` updates it once) and
assumes each member that fits in it (``Snapshot.AssumePod``; ``ForgetPod`` when it is
reverted): the member joins its node's pods, so a plugin that reads the node sees it, but
three things the snapshot computed from the cache are not refreshed until the next cycle:

* ``HavePodsWithAffinityList``: the nodes holding a pod that declares pod affinity or
  anti-affinity (even with no term);
* ``HavePodsWithRequiredAntiAffinityList``: the nodes holding a pod with a required pod
  anti-affinity term;
* ``usedPVCSet`` (``IsPVCUsedByPods``): the claims some placed pod uses.

Workload-aware preemption's dry run (``BackupSnapshot``) rebuilds both lists from the same
nodes, so they stay the cycle's first ones throughout, and keeps the claim set as it was.

kubesched's snapshot is a view of the cache, which assumes the members itself, and its
plugins read indexes the cache keeps current. While a pod-group cycle runs, the cache tells
this journal of every pod that joins or leaves a node, before it does: the first time a node
is touched, whether it was on each list when the cycle began; then which placed pods sit on
nodes off a list, and how the users of each claim changed. Plugins subtract what the
snapshot's lists leave out (``framework.views.PodGroupCycleLists``).
"""

from __future__ import annotations

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo

__all__ = ["GroupCycleLists"]


def _has_declared_affinity(info: NodeInfo) -> bool:
    """Whether the node holds a pod upstream's ``podWithAffinity`` counts: one that sets
    ``podAffinity`` or ``podAntiAffinity`` at all (the node's own record only keeps pods
    with terms)."""
    if info.pods_with_affinity:
        return True
    return any(p.pod_affinity.declared for p in info.pods.values())


class GroupCycleLists:
    """One pod-group cycle's journal (``framework.views.PodGroupCycleLists``); see the module."""

    __slots__ = ("_affinity_rows", "_anti_rows", "_off_affinity", "_off_anti", "_claims")

    def __init__(self) -> None:
        self._affinity_rows: dict[int, bool] = {}  # row -> on HavePodsWithAffinityList when the cycle began
        self._anti_rows: dict[int, bool] = {}  # row -> on HavePodsWithRequiredAntiAffinityList then
        self._off_affinity: dict[str, tuple[PodInfo, NodeInfo]] = {}  # uid -> pod and node, off the first list
        self._off_anti: dict[str, tuple[PodInfo, NodeInfo]] = {}
        self._claims: dict[tuple[str, str], int] = {}  # (namespace, claim) -> users added since the start

    # -- the cache's calls, before it changes the node --------------------------------
    def placing(self, pod: PodInfo, info: NodeInfo) -> None:
        aff = pod.pod_affinity
        if aff.declared:
            row = info.row
            listed = self._affinity_rows.get(row)
            if listed is None:
                listed = self._affinity_rows[row] = _has_declared_affinity(info)
            if not listed:
                self._off_affinity[pod.uid] = (pod, info)
            if aff.required_anti_affinity:
                listed = self._anti_rows.get(row)
                if listed is None:
                    listed = self._anti_rows[row] = bool(info.pods_with_required_anti_affinity)
                if not listed:
                    self._off_anti[pod.uid] = (pod, info)
        if pod.volumes:
            self._count_claims(pod, 1)

    def removing(self, pod: PodInfo, info: NodeInfo) -> None:
        aff = pod.pod_affinity
        if aff.declared:
            row = info.row
            # The pod is still there: a node first touched now was on the lists.
            self._affinity_rows.setdefault(row, True)
            self._off_affinity.pop(pod.uid, None)
            if aff.required_anti_affinity:
                self._anti_rows.setdefault(row, True)
                self._off_anti.pop(pod.uid, None)
        if pod.volumes:
            self._count_claims(pod, -1)

    def _count_claims(self, pod: PodInfo, delta: int) -> None:
        claims = self._claims
        for volume in pod.volumes:
            if volume.claim and not volume.ephemeral:  # upstream counts persistentVolumeClaim sources only
                key = (pod.namespace, volume.claim)
                claims[key] = claims.get(key, 0) + delta

    # -- what plugins read (``PodGroupCycleLists``) -------------------------------------
    def unlisted_affinity_pods(self) -> list[tuple[PodInfo, NodeInfo]]:
        return list(self._off_affinity.values())

    def unlisted_required_anti_affinity_pods(self) -> list[tuple[PodInfo, NodeInfo]]:
        return list(self._off_anti.values())

    def claim_users_added(self, namespace: str, claim: str) -> int:
        return self._claims.get((namespace, claim), 0)
