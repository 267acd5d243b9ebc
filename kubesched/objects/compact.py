"""Sharing the parts of bound pods that many pods have in common.

A large cluster holds a few hundred thousand bound pods made from a few hundred
templates: the same labels, tolerations, images and affinity over and over (requests
are already shared by shape when parsed). ``PodCompactor`` hands back one shared copy
of each such part, so the cache keeps a small record per pod plus references.
"""

from __future__ import annotations

import sys
from typing import Any, Hashable

from .pod import PodInfo

__all__ = ["PodCompactor"]


class PodCompactor:
    """Interns immutable pod parts; bounded, so a stream of unique pods cannot grow it forever."""

    def __init__(self, limit: int = 1 << 16) -> None:
        self._limit = limit
        self._shared: dict[Hashable, Any] = {}

    def _share(self, key: Hashable, value: Any) -> Any:
        found = self._shared.get(key)
        if found is not None:
            return found
        if len(self._shared) >= self._limit:
            self._shared.clear()
        self._shared[key] = value
        return value

    def compact(self, pod: PodInfo) -> PodInfo:
        """``pod`` without its raw document, its parts shared with identical pods. A pod
        without one is compact already: ``parse_pod(..., keep_raw=False)`` shares its parts
        as it parses them, so the informer's copy and the cache's are one object."""
        if pod.raw is None:
            return pod
        return pod.copy_with(
            namespace=sys.intern(pod.namespace),
            scheduler_name=sys.intern(pod.scheduler_name),
            node_name=sys.intern(pod.node_name),
            labels=self._share(("labels", *sorted(pod.labels.items())), pod.labels),
            node_selector=self._share(("selector", *sorted(pod.node_selector.items())), pod.node_selector),
            tolerations=self._share(("tolerations", pod.tolerations), pod.tolerations),
            images=self._share(("images", pod.images), pod.images),
            host_ports=self._share(("ports", pod.host_ports), pod.host_ports),
            pod_affinity=self._share(("affinity", pod.pod_affinity), pod.pod_affinity),
            topology_spread_constraints=self._share(("spread", pod.topology_spread_constraints), pod.topology_spread_constraints),
            owner_references=self._share(("owners", pod.owner_references), pod.owner_references),
            raw=None,
        )
