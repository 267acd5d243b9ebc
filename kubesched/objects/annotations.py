"""``metadata.annotations`` of nodes and pods, as plugins read them: parsed once, shared.

Upstream plugins see the whole ``*v1.Node`` and ``*v1.Pod``; kubesched's records keep
what scheduling reads, and annotations are part of that: a plugin keyed on
``acme.io/window: open`` reads ``node.annotations`` or ``pod.annotations``. They are
kept compactly: objects of one template share one read-only map (parsed once, by
content), objects without annotations share one empty map, and
``kubectl.kubernetes.io/last-applied-configuration`` (a second copy of the whole
object, written by ``kubectl apply``) is left out. A plugin that needs it, or any
other part of the document, declares ``PluginSpec(needs_raw=True)`` and reads
``Node.raw`` / ``PodInfo.raw``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .pod_spec import memo, str_map

__all__ = ["LAST_APPLIED", "NO_ANNOTATIONS", "parse_annotations"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NO_ANNOTATIONS: Mapping[str, str] = MappingProxyType({})
"""The annotations of every object that has none (one shared, read-only map)."""


def _read_only(raw: Any) -> Mapping[str, str]:
    return MappingProxyType(str_map(raw, "metadata.annotations"))


def parse_annotations(raw: Any) -> Mapping[str, str]:
    """``metadata.annotations`` as a read-only map, shared by equal ones, without
    ``LAST_APPLIED``; ``ObjectError`` when it is not a map of strings."""
    if not raw:
        if raw is None or raw == {}:
            return NO_ANNOTATIONS
        return _read_only(raw)  # a falsy non-map: the error names the field
    if type(raw) is dict and LAST_APPLIED in raw:
        raw = {k: v for k, v in raw.items() if k != LAST_APPLIED}
        if not raw:
            return NO_ANNOTATIONS
    return memo("annotations", raw, _read_only)
