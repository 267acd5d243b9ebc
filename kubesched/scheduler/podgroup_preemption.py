"""Workload-aware preemption in a pod-group cycle (upstream's ``runWorkloadAwarePreemption``,
behind WorkloadAwarePreemption).

When a pod group's cycle ends Unschedulable, the profile's PodGroupPostFilter plugin
(DefaultPreemption, ``framework/podgroup_post_filter.py``) is asked to make room for the
whole group. Before it is asked:

* a profile without it answers Unschedulable, "default preemption plugin is not
  registered, workload aware preemption is disabled";
* a PodGroup the informer does not know fails the cycle with an Error;
* a group with topology constraints is refused, "workload aware preemption is not
  supported for pod groups with scheduling constraints" (TopologyAwareWorkloadScheduling
  would have it preempt once per placement).

The plugin works on a backup of the snapshot (``cache.dry_run.SnapshotBackup``): it takes
victims off their nodes and reruns the group's algorithm without PostFilter plugins, as
often as it needs; every node is put back as it was when it returns. The pod-group cycle
(``podgroup_cycle.py``) then marks the group as waiting on preemption (Success), fails it
(Error) or adds the plugin's reason to the group's status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..cache.cache import CacheError
from ..cache.dry_run import SnapshotBackup
from ..framework.cycle_state import CycleState
from ..framework.podgroups import QueuedPodGroupInfo
from ..framework.runtime import Framework
from ..framework.status import Code, Status

if TYPE_CHECKING:
    from .podgroup_cycle import PodGroupCycle, PodGroupPostFilter

__all__ = ["NOT_REGISTERED", "CONSTRAINED", "workload_aware_preemption"]

NOT_REGISTERED = "default preemption plugin is not registered, workload aware preemption is disabled"
CONSTRAINED = "workload aware preemption is not supported for pod groups with scheduling constraints"


def workload_aware_preemption(cycle: "PodGroupCycle") -> "PodGroupPostFilter":
    """The pod-group cycle's PodGroupPostFilter hook for the scheduler ``cycle``."""

    def run(fwk: Framework, group_state: CycleState, info: QueuedPodGroupInfo) -> Status | None:
        if not fwk.pod_group_post_filter_plugins():
            return Status(Code.UNSCHEDULABLE, NOT_REGISTERED)
        group = cycle.pod_groups.pod_group(info.namespace, info.name)
        if group is None:
            return Status(Code.ERROR, "failed to get pod group object: "
                                      f'podgroup.scheduling.k8s.io "{info.name}" not found')
        if group.topology_keys:
            return Status(Code.UNSCHEDULABLE, CONSTRAINED)
        try:
            backup = SnapshotBackup(cycle.cache)
        except CacheError as err:
            return Status(Code.ERROR, f"failed to backup snapshot: {err}", error=err)

        def schedule() -> Status | None:
            """The group's algorithm again, PostFilter plugins skipped, on the changed cluster."""
            return cycle._pod_group_algorithm(fwk, group_state, info, False, cycle.placements_enabled).status

        try:
            return fwk.run_pod_group_post_filter(group, list(info.unscheduled_pods), schedule, backup)
        finally:
            backup.restore()

    return run
