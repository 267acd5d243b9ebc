"""The snapshot backup workload-aware preemption's dry runs change (upstream's
``Snapshot.BackupSnapshot``): pods taken off their nodes leave the node's sums, the node table
and the pod observers' indexes, and come back; restoring puts every node back as it was, its
pods in their order; the cache still knows every pod meanwhile; backups do not stack."""

from __future__ import annotations

import pytest

from kubesched.cache.cache import Cache, CacheError
from kubesched.cache.dry_run import SnapshotBackup
from kubesched.objects.nodeinfo import NodeInfo
from kubesched.objects.pod import PodInfo

from ..helpers import make_node, make_pod


class Counting:
    """A pod observer counting the pods on each node."""

    def __init__(self) -> None:
        self.per_node: dict[str, int] = {}

    def pod_added(self, pod: PodInfo, node: NodeInfo) -> None:
        self.per_node[node.name] = self.per_node.get(node.name, 0) + 1

    def pod_removed(self, pod: PodInfo, node: NodeInfo) -> None:
        self.per_node[node.name] -= 1

    def nodes_changed(self) -> None:
        pass


def cache_with(*names: str) -> tuple[Cache, Counting]:
    cache = Cache()
    cache.add_node(make_node("n1", cpu="8"))
    for name in names:
        cache.add_pod(make_pod(name, uid=name, cpu="1", node_name="n1"))
    counting = Counting()
    cache.add_observer(counting)
    return cache, counting


def test_a_pod_taken_off_leaves_the_node_its_row_and_the_indexes_but_not_the_cache() -> None:
    cache, counting = cache_with("a", "b")
    info = cache.nodes["n1"]
    backup = SnapshotBackup(cache)
    backup.remove_pod(cache.get_pod("a"))
    assert list(info.pods) == ["b"] and info.requested.milli_cpu == 1000
    assert int(cache.table.req_cpu[info.row]) == 1000 and counting.per_node == {"n1": 1}
    assert cache.get_pod("a") is not None  # the cache still knows it
    backup.add_pod(cache.get_pod("a"))
    assert list(info.pods) == ["b", "a"] and info.requested.milli_cpu == 2000 and counting.per_node == {"n1": 2}
    backup.restore()


def test_restore_puts_every_pod_back_in_its_node_s_order() -> None:
    cache, counting = cache_with("a", "b", "c", "d")
    info = cache.nodes["n1"]
    backup = SnapshotBackup(cache)
    for name in ("a", "c", "d"):
        backup.remove_pod(cache.get_pod(name))
    backup.add_pod(cache.get_pod("a"))  # reprieved: now after b
    backup.restore()
    assert list(info.pods) == ["a", "b", "c", "d"]
    assert info.requested.milli_cpu == 4000 and int(cache.table.req_cpu[info.row]) == 4000
    assert counting.per_node == {"n1": 4}


def test_backups_do_not_stack_and_a_restored_one_is_spent() -> None:
    cache, _ = cache_with("a")
    backup = SnapshotBackup(cache)
    with pytest.raises(CacheError, match="cannot stack backups"):
        SnapshotBackup(cache)
    backup.restore()
    with pytest.raises(CacheError, match="the dry run is over"):
        backup.remove_pod(cache.get_pod("a"))
    SnapshotBackup(cache).restore()  # a new one once the first is restored


def test_only_placed_pods_come_off_and_only_those_taken_off_come_back() -> None:
    cache, _ = cache_with("a")
    backup = SnapshotBackup(cache)
    with pytest.raises(CacheError, match="is not on node"):
        backup.remove_pod(make_pod("ghost", uid="ghost", node_name="n1"))
    with pytest.raises(CacheError, match="was not taken off"):
        backup.add_pod(cache.get_pod("a"))
    backup.restore()
