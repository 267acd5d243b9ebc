"""Random pod groups over a random cluster, for the placement checks (and your own tests).

``with_pod_groups(cluster)`` gives a cluster the view of a scheduler with GenericWorkload
on, without changing the cluster itself: a handle over the same cache whose
``pod_group_manager`` is the scheduler's own directory of PodGroups (``kubesched.cache``),
and copies of most of the cluster's pending pods made members of a few groups in their
namespace: gangs (``minCount`` from 1 to their size) or basic groups, some with a topology
constraint on a node label, some with a member already running on a node (so "the domain
of the scheduled members" is exercised). Deterministic: the same cluster gets the same
groups.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..cache.pod_groups import PodGroupDirectory, PodGroupStates
from ..framework.handle import Handle
from ..framework.podgroups import PodGroupInfo
from ..objects.pod import PodInfo, parse_pod
from ..objects.podgroup import PodGroup
from ..scheduler.handle import HandleHub
from .clusters import RandomCluster

__all__ = ["DEFAULT_TOPOLOGY_KEYS", "PodGroupCluster", "with_pod_groups"]

DEFAULT_TOPOLOGY_KEYS: tuple[str, ...] = ("topology.kubernetes.io/zone", "disk")
"""Node labels random groups are constrained to (each group with probability 0.5)."""


@dataclass(eq=False)
class PodGroupCluster:
    """A random cluster seen with pod groups: build plugins with ``handle``."""

    cluster: RandomCluster
    handle: Handle
    directory: PodGroupDirectory
    groups: list[tuple[PodGroup, PodGroupInfo]]

    def describe(self) -> str:
        return f"{self.cluster.describe()} with its pod groups (kubesched.testing.with_pod_groups)"


def with_pod_groups(cluster: RandomCluster, topology_keys: Sequence[str] = DEFAULT_TOPOLOGY_KEYS) -> PodGroupCluster:
    """``cluster`` with random pod groups (see the module docstring)."""
    rng = cluster.rng("pod-groups")
    states = PodGroupStates()
    directory = PodGroupDirectory(states)
    hub = HandleHub(cluster.cache, cluster.clock, None, object_stores=cluster.hub.object_stores)
    hub.features = cluster.hub.features
    hub.pod_group_manager = directory
    by_namespace: dict[str, list[PodInfo]] = {}
    for pod in cluster.pods:
        if not pod.node_name and rng.random() < 0.8:
            by_namespace.setdefault(pod.namespace, []).append(pod)
    names = cluster.node_names()
    groups: list[tuple[PodGroup, PodGroupInfo]] = []
    for namespace, pods in sorted(by_namespace.items()):
        split = [pods] if len(pods) < 3 or rng.random() < 0.5 else [pods[::2], pods[1::2]]
        for k, chosen in enumerate(split):
            name = f"group-{k}"
            bound = 0
            if names and rng.random() < 0.3:
                states.add_member(_running_member(namespace, name, rng.choice(names)))
                bound = 1
            min_count = None if rng.random() < 0.3 else rng.randint(1, len(chosen) + bound)
            keys = (rng.choice(list(topology_keys)),) if topology_keys and rng.random() < 0.5 else ()
            group = PodGroup(namespace, name, f"uid-pg-{namespace}-{name}", 1, "1", min_count, keys)
            directory.upsert(group)
            members = [pod.copy_with(pod_group_name=name) for pod in chosen]
            for member in members:
                states.add_member(member)
            groups.append((group, PodGroupInfo(namespace, name, members)))
    return PodGroupCluster(cluster, hub.handle("default-scheduler"), directory, groups)


def _running_member(namespace: str, group: str, node_name: str) -> PodInfo:
    """A member already running on ``node_name`` (known to the group's state, not to the cache)."""
    name = f"{group}-running"
    return parse_pod({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
        "spec": {"nodeName": node_name, "schedulingGroup": {"podGroupName": group},
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "100m"}}}]},
    }, keep_raw=False)
