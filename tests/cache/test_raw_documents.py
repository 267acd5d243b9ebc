"""The cache compacts the pods bound to nodes: it drops their documents unless told to keep
them (a profile enables a plugin whose spec says ``needs_raw``)."""

from __future__ import annotations

from kubesched.cache.cache import Cache
from kubesched.objects import PodInfo
from tests.helpers import make_node, make_pod


def _bound(cache: Cache, *names: str) -> list[PodInfo]:
    cache.add_node(make_node("n1"))
    for name in names:
        cache.add_pod(make_pod(name, uid=f"uid-{name}", node_name="n1", labels={"app": "web"}))
    return list(cache.nodes["n1"].pods.values())


def test_bound_pods_lose_their_documents_by_default() -> None:
    assert [pod.raw for pod in _bound(Cache(), "a")] == [None]


def test_bound_pods_keep_their_documents_when_raw_objects_are_kept() -> None:
    (pod,) = _bound(Cache(keep_raw_objects=True), "a")
    assert pod.raw is not None and pod.raw["metadata"]["name"] == "a"


def test_an_updated_bound_pod_keeps_its_new_document_when_raw_objects_are_kept() -> None:
    cache = Cache(keep_raw_objects=True)
    _bound(cache, "a")
    cache.update_pod(make_pod("a", uid="uid-a", node_name="n1", labels={"app": "web", "tier": "front"}))
    (pod,) = cache.nodes["n1"].pods.values()
    assert pod.raw is not None and pod.raw["metadata"]["labels"] == {"app": "web", "tier": "front"}
