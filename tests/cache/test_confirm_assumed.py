"""Confirming an assumed pod (the informer's Add after binding) keeps every total exact.

The cache skips re-accounting when the bound pod counts the same as the assumed one;
these cases pin that the result is what removing the assumed pod and adding the bound
one gives, and that a bound pod that counts differently is re-accounted.
"""

from __future__ import annotations

import numpy as np

from kubesched.cache.cache import Cache
from tests.helpers import make_node, make_pod


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, int]] = []

    def pod_added(self, pod, node) -> None:
        self.events.append(("added", pod.key, id(pod)))

    def pod_removed(self, pod, node) -> None:
        self.events.append(("removed", pod.key, id(pod)))

    def nodes_changed(self) -> None:
        pass


def _state(cache: Cache, name: str) -> tuple:
    info = cache.nodes[name]
    row = info.row
    t = cache.table
    return (
        list(info.pods),
        info.requested.milli_cpu,
        info.requested.memory,
        info.non_zero_requested.milli_cpu,
        len(info.used_ports),
        sorted(info.pods_with_affinity),
        sorted(info.pods_with_required_anti_affinity),
        int(t.req_cpu[row]),
        int(t.req_mem[row]),
        int(t.nz_cpu[row]),
        int(t.pod_count[row]),
        {k: dict(v) for k, v in t.ports.items()},
    )


def _anti_affinity() -> dict:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }


def _cache_with_pods() -> tuple[Cache, _Recorder]:
    cache = Cache()
    cache.add_node(make_node("n1", cpu="8", memory="16Gi"))
    for i in range(3):
        cache.add_pod(make_pod(f"bound-{i}", cpu="100m", memory="1Gi", node_name="n1", host_ports=[8000 + i], uid=f"uid-bound-{i}"))
    recorder = _Recorder()
    cache.add_observer(recorder)
    recorder.events.clear()
    return cache, recorder


def test_confirming_an_assumed_pod_equals_remove_then_add():
    cache, recorder = _cache_with_pods()
    pending = make_pod("web", cpu="250m", memory="2Gi", host_ports=[80], affinity=_anti_affinity(), labels={"app": "web"})
    assumed = pending.copy_with(node_name="n1")
    cache.assume_pod(assumed, "n1")
    generation = cache.table.pod_generation

    bound = assumed.copy_with(raw=None)
    cache.add_pod(bound)

    # the reference: the slow path, remove the assumed pod then add the bound one
    reference, _ = _cache_with_pods()
    reference.add_pod(bound.copy_with())
    assert _state(cache, "n1") == _state(reference, "n1")
    assert list(cache.nodes["n1"].pods)[-1] == bound.uid  # the record moved to the end, as remove + add does
    assert not cache.is_assumed(bound)
    stored = cache.get_pod(bound.uid)
    assert stored is not assumed and stored.node_name == "n1"
    assert cache.nodes["n1"].pods[bound.uid] is stored
    assert cache.nodes["n1"].pods_with_required_anti_affinity[bound.uid] is stored
    # nothing observers read changed (only the raw document went): the same placement to them
    assert [e for e in recorder.events if e[1] == "default/web"] == [("added", "default/web", id(assumed))]
    assert cache.table.pod_generation == generation  # sums unchanged: no row to recompute


def test_the_very_assumed_object_handed_back_is_confirmed_as_remove_then_add():
    # The simulator's informer reports the bound pod as the object that was assumed.
    cache, recorder = _cache_with_pods()
    pending = make_pod("web", cpu="250m", memory="2Gi", host_ports=[80], affinity=_anti_affinity(), labels={"app": "web"})
    assumed = pending.copy_with(node_name="n1")
    cache.assume_pod(assumed, "n1")
    generation = cache.table.pod_generation

    cache.add_pod(assumed)

    reference, _ = _cache_with_pods()
    reference.add_pod(assumed.copy_with(raw=None))
    assert _state(cache, "n1") == _state(reference, "n1")
    assert not cache.is_assumed(assumed)
    stored = cache.get_pod(assumed.uid)
    assert stored is not assumed and stored.raw is None  # the cache keeps its compact copy
    assert cache.nodes["n1"].pods[assumed.uid] is stored
    assert cache.nodes["n1"].pods_with_required_anti_affinity[assumed.uid] is stored
    assert [e for e in recorder.events if e[1] == "default/web"] == [("added", "default/web", id(assumed))]
    assert cache.table.pod_generation == generation
    cache.remove_pod(assumed)  # confirmed, it is a bound pod like any other
    assert assumed.uid not in cache.nodes["n1"].pods


def test_observers_see_a_confirmation_that_changes_a_field_as_remove_then_add():
    cache, recorder = _cache_with_pods()
    assumed = make_pod("web", cpu="250m", memory="2Gi", labels={"app": "web"}).copy_with(node_name="n1")
    cache.assume_pod(assumed, "n1")
    bound = assumed.copy_with(raw=None, labels={"app": "web", "bound": "yes"})
    cache.add_pod(bound)
    stored = cache.get_pod(bound.uid)
    assert [(e[0], e[1]) for e in recorder.events[-2:]] == [("removed", "default/web"), ("added", "default/web")]
    assert recorder.events[-2][2] == id(assumed) and recorder.events[-1][2] == id(stored)


def test_a_bound_pod_that_counts_differently_is_reaccounted():
    cache, _ = _cache_with_pods()
    assumed = make_pod("web", cpu="250m", memory="2Gi", node_name="n1")
    cache.assume_pod(assumed, "n1")
    resized = make_pod("web", cpu="500m", memory="2Gi", node_name="n1", uid=assumed.uid)
    cache.add_pod(resized)
    reference, _ = _cache_with_pods()
    reference.add_pod(make_pod("web", cpu="500m", memory="2Gi", node_name="n1", uid=assumed.uid))
    assert _state(cache, "n1") == _state(reference, "n1")
    assert np.array_equal(cache.table.req_cpu[: cache.table.size], reference.table.req_cpu[: reference.table.size])
