"""PodGroupPostFilter: what a pod-group cycle runs when its group fits nowhere (upstream's
``PodGroupPostFilterPlugin``, behind WorkloadAwarePreemption).

After a pod-group cycle ends Unschedulable, the scheduler may ask the profile's
PodGroupPostFilter plugin to make room for the whole group at once (workload-aware
preemption). Upstream allows exactly one such plugin, DefaultPreemption, and finds it
itself rather than from the configuration: with the gate on, the plugin the profile
enables under the name ``DefaultPreemption`` is the point's plugin when it implements
the method, and no other plugin ever is. The same holds here
(``Framework.pod_group_post_filter_plugins``); the configuration has no
``podGroupPostFilter`` list, as upstream's has none.

The plugin is handed:

* the ``PodGroup`` and the pods the cycle tried, in its order;
* ``schedule``: the group's scheduling algorithm run again on the cluster as it stands,
  without PostFilter plugins (a dry run: nothing is bound, every pod it assumes is
  forgotten again); None when the whole group would be feasible, else its status;
* ``snapshot``: the cluster the dry runs read, which the plugin may change by taking
  pods off their nodes (``remove_pod``) and putting them back (``add_pod``). The
  scheduler puts every node back as it was after the call (upstream backs the snapshot
  up before and restores it after), so the plugin never needs to undo its changes.

The answer: None (or Success) when the plugin has made room (victims are being evicted:
the group's pods go back to the queue, "waiting for preemption"), an Error status to fail
the group's cycle, or a rejection whose message the scheduler appends to the group's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, cast, runtime_checkable

from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo
from ..objects.podgroup import PodGroup
from .interfaces import Plugin
from .status import Code, Status

__all__ = [
    "DEFAULT_PREEMPTION",
    "DryRunSnapshot",
    "PodGroupPostFilterPlugin",
    "PodGroupPostFilterRuns",
    "PodGroupSchedulingFunc",
]

DEFAULT_PREEMPTION = "DefaultPreemption"
"""The only plugin name upstream takes a PodGroupPostFilter plugin from."""

PodGroupSchedulingFunc = Callable[[], "Status | None"]
"""The group's scheduling algorithm, rerun without PostFilter plugins on the cluster as the
plugin has changed it: None when the group is feasible, else the group's status."""


class DryRunSnapshot(Protocol):
    """The cluster a PodGroupPostFilter plugin may change for the length of its call."""

    def list(self) -> list[NodeInfo]:
        """Every node, in snapshot order, with the pods it holds now."""
        ...

    def get(self, name: str) -> NodeInfo | None: ...

    def remove_pod(self, pod: PodInfo) -> None:
        """Take a pod placed on a node (bound or assumed) off it, for the dry runs."""
        ...

    def add_pod(self, pod: PodInfo) -> None:
        """Put a pod taken off by ``remove_pod`` back on its node."""
        ...


@runtime_checkable
class PodGroupPostFilterPlugin(Plugin, Protocol):
    """A plugin that makes room for a pod group that fits nowhere (only DefaultPreemption)."""

    def pod_group_post_filter(self, pod_group: PodGroup, pods: Sequence[PodInfo], schedule: PodGroupSchedulingFunc,
                              snapshot: DryRunSnapshot) -> Status | None: ...


class PodGroupPostFilterRuns:
    """The PodGroupPostFilter point of ``Framework``."""

    _pod_group_post_filter: list[PodGroupPostFilterPlugin]

    def _init_pod_group_post_filter(self, instances: Mapping[str, Plugin], workload_aware_preemption: bool) -> None:
        """upstream's ``NewFramework``: with WorkloadAwarePreemption, the profile's DefaultPreemption
        when it implements the point; nothing otherwise (upstream logs why and goes on)."""
        found = instances.get(DEFAULT_PREEMPTION)
        usable = workload_aware_preemption and callable(getattr(found, "pod_group_post_filter", None))
        self._pod_group_post_filter = [cast(PodGroupPostFilterPlugin, found)] if usable else []

    def pod_group_post_filter_plugins(self) -> list[PodGroupPostFilterPlugin]:
        """upstream's ``PodGroupPostFilterPlugins``: empty, or the profile's DefaultPreemption."""
        return list(self._pod_group_post_filter)

    def run_pod_group_post_filter(self, pod_group: PodGroup, pods: Sequence[PodInfo],
                                  schedule: PodGroupSchedulingFunc, snapshot: DryRunSnapshot) -> Status:
        """Ask the point's plugin (the first; upstream has at most one) to make room for the
        group. Success, an Error (the plugin's, or what it raised), or its rejection; the
        caller checks ``pod_group_post_filter_plugins`` first, as upstream's does."""
        if not self._pod_group_post_filter:
            return Status(Code.UNSCHEDULABLE, "no PodGroupPostFilter plugin")
        plugin = self._pod_group_post_filter[0]
        try:
            status = plugin.pod_group_post_filter(pod_group, pods, schedule, snapshot)
        except Exception as err:  # a plugin bug fails the group's cycle, not the scheduler
            return Status.as_error(err, plugin.name)
        if status is None:
            return Status(Code.SUCCESS, plugin=plugin.name)
        return status if status.plugin else status.with_plugin(plugin.name)
