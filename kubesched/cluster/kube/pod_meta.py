"""Metadata of a pending pod's last-seen document that kube-scheduler writes back: the
``resourceVersion`` its events' ``regarding`` reference carries (``GetReference``) and
the ``generation`` its ``PodScheduled`` condition observed (``observedGeneration``,
PodObservedGenerationTracking, GA in v1.35). Bound pods lose their document in the
cache; for them both are absent, as they are for objects built without one."""

from __future__ import annotations

from ...objects.pod import PodInfo

__all__ = ["pod_generation", "pod_resource_version"]


def _metadata(pod: PodInfo) -> dict[str, object]:
    meta = pod.raw.get("metadata") if pod.raw is not None else None
    return meta if isinstance(meta, dict) else {}


def pod_resource_version(pod: PodInfo) -> str:
    version = _metadata(pod).get("resourceVersion")
    return version if isinstance(version, str) else ""


def pod_generation(pod: PodInfo) -> int:
    generation = _metadata(pod).get("generation")
    return generation if isinstance(generation, int) and not isinstance(generation, bool) else 0
