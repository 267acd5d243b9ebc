"""Sharing the parts of bound pods that many pods have in common.

A large cluster holds a few hundred thousand bound pods made from a few hundred
templates: the same labels, tolerations, images and affinity over and over (requests
are already shared by shape when parsed). ``PodCompactor`` hands back one shared copy
of each such part, so the cache keeps a small record per pod plus references.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Hashable

from .pod import PodInfo

__all__ = ["PodCompactor"]


class PodCompactor:
    """Interns immutable pod parts; bounded, so a stream of unique pods cannot grow it forever.

    ``keep_raw``: compacted pods keep their documents (a profile enables a plugin whose
    spec says ``needs_raw``, as upstream's plugins see every pod whole); otherwise they drop them.
    """

    def __init__(self, limit: int = 1 << 16, keep_raw: bool = False) -> None:
        self._limit = limit
        self._keep_raw = keep_raw
        self._shared: dict[Hashable, Any] = {}
        # Parts already seen, by identity: pods parsed from one template hold the very same
        # objects (the parser memoises them), so most parts are found without hashing them.
        # Each entry keeps its object alive, so an id is never reused while it is here.
        self._seen: dict[tuple[str, int], tuple[Any, Any]] = {}
        self._last: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None  # the last pod's parts, and shared

    def _share(self, key: Hashable, value: Any) -> Any:
        found = self._shared.get(key)
        if found is not None:
            return found
        if len(self._shared) >= self._limit:
            self._shared.clear()
        self._shared[key] = value
        return value

    def _part(self, kind: str, value: Any, key: Callable[[], Hashable]) -> Any:
        seen = self._seen.get((kind, id(value)))
        if seen is not None and seen[0] is value:
            return seen[1]
        shared = self._share(key(), value)
        if len(self._seen) >= self._limit:
            self._seen.clear()
        self._seen[(kind, id(value))] = (value, shared)
        return shared

    def compact(self, pod: PodInfo) -> PodInfo:
        """``pod`` with its parts shared with identical pods, and without its raw document
        unless ``keep_raw``. A pod without one is compact already: ``parse_pod(...,
        keep_raw=False)`` shares its parts as it parses them, so the informer's copy and the
        cache's are one object."""
        if pod.raw is None:
            return pod
        parts = (pod.labels, pod.node_selector, pod.tolerations, pod.images, pod.host_ports, pod.pod_affinity,
                 pod.topology_spread_constraints, pod.owner_references)
        last = self._last
        if last is not None and parts == last[0]:  # the previous pod's template: the same shared parts
            shared = last[1]
        else:
            shared = (
                self._part("labels", pod.labels, lambda: ("labels", *sorted(pod.labels.items()))),
                self._part("selector", pod.node_selector, lambda: ("selector", *sorted(pod.node_selector.items()))),
                self._part("tolerations", pod.tolerations, lambda: ("tolerations", pod.tolerations)),
                self._part("images", pod.images, lambda: ("images", pod.images)),
                self._part("ports", pod.host_ports, lambda: ("ports", pod.host_ports)),
                self._part("affinity", pod.pod_affinity, lambda: ("affinity", pod.pod_affinity)),
                self._part("spread", pod.topology_spread_constraints, lambda: ("spread", pod.topology_spread_constraints)),
                self._part("owners", pod.owner_references, lambda: ("owners", pod.owner_references)),
            )
            self._last = (parts, shared)
        labels, selector, tolerations, images, ports, affinity, spread, owners = shared
        return pod.copy_with(
            namespace=sys.intern(pod.namespace),
            scheduler_name=sys.intern(pod.scheduler_name),
            node_name=sys.intern(pod.node_name),
            labels=labels,
            node_selector=selector,
            tolerations=tolerations,
            images=images,
            host_ports=ports,
            pod_affinity=affinity,
            topology_spread_constraints=spread,
            owner_references=owners,
            raw=pod.raw if self._keep_raw else None,
        )
