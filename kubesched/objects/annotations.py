"""``metadata.annotations`` of nodes and pods, as plugins read them: parsed once, compact.

Upstream plugins see the whole ``*v1.Node`` and ``*v1.Pod``; kubesched's records keep
what scheduling reads, and annotations are part of that: a plugin keyed on
``acme.io/window: open`` reads ``node.annotations`` or ``pod.annotations``, a read-only
``Mapping[str, str]``. A cluster holds hundreds of thousands of pods, many with
annotations of their own (a CNI's pod IP, a container id), so they are kept compactly:
an ``Annotations`` is two tuples, the keys (one tuple shared by every object with the
same keys, the key strings interned) and the values; objects with equal annotations
share one; objects without share ``NO_ANNOTATIONS``; and
``kubectl.kubernetes.io/last-applied-configuration`` (a second copy of the whole
object, written by ``kubectl apply``) is left out. A plugin that needs it, or any
other part of the document, declares ``PluginSpec(needs_raw=True)`` and reads
``Node.raw`` / ``PodInfo.raw``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import ObjectError

__all__ = ["LAST_APPLIED", "NO_ANNOTATIONS", "Annotations", "parse_annotations"]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class Annotations(Mapping[str, str]):
    """A read-only map of a few strings: the keys' tuple (shared) and the values' tuple."""

    __slots__ = ("_keys", "_values")

    def __init__(self, keys: tuple[str, ...], values: tuple[str, ...]) -> None:
        self._keys = keys
        self._values = values

    def __getitem__(self, key: str) -> str:
        try:
            return self._values[self._keys.index(key)]
        except ValueError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:  # noqa: ANN401 - Mapping.get's own signature
        try:
            return self._values[self._keys.index(key)]
        except ValueError:
            return default

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Annotations):
            if self._keys == other._keys:
                return self._values == other._values
        if isinstance(other, Mapping):
            return dict(zip(self._keys, self._values)) == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._keys, self._values))

    def __repr__(self) -> str:
        return repr(dict(zip(self._keys, self._values)))


NO_ANNOTATIONS = Annotations((), ())
"""The annotations of every object that has none."""

_LIMIT = 1 << 14  # shared key tuples and annotation maps remembered; beyond that, start afresh
_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}
_SHARED: dict[tuple[tuple[str, ...], tuple[str, ...]], Annotations] = {}


def parse_annotations(raw: Any) -> Mapping[str, str]:
    """``metadata.annotations`` as a compact read-only map without ``LAST_APPLIED``;
    ``ObjectError`` when it is not a map of strings."""
    if raw is None:
        return NO_ANNOTATIONS
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise ObjectError("metadata.annotations", "must be a map of strings")
    items = [(str(k), v) for k, v in raw.items() if k != LAST_APPLIED]
    if not items:
        return NO_ANNOTATIONS
    keys = tuple(k for k, _ in items)
    shared_keys = _KEYS.get(keys)
    if shared_keys is None:
        if len(_KEYS) >= _LIMIT:
            _KEYS.clear()
        shared_keys = _KEYS[keys] = tuple(sys.intern(k) for k in keys)
    values = tuple(v for _, v in items)
    key = (shared_keys, values)
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _LIMIT:
            _SHARED.clear()
        found = _SHARED[key] = Annotations(shared_keys, values)
    return found
