"""VolumeBinding's PreBind against a real API server (upstream's ``BindPodVolumes``).

In a live cluster the scheduler does not bind volumes itself: it writes its decisions
and lets the PV controller (and an external provisioner) carry them out, then waits.

* ``api_updates``: each PV chosen for a claim with its ``claimRef`` set, and each claim
  to provision with the ``volume.kubernetes.io/selected-node`` annotation, as the
  assumed objects say (upstream's ``bindAPIUpdate``).
* ``bindings_done``: whether the controllers have finished, read from the informers'
  objects (upstream's ``checkBindings``): every claim bound to its PV with
  ``bind-completed``; a PV whose claimRef was taken away, or a claim that lost its
  selected node, is an error (the pod is retried).

PreBind polls ``bindings_done`` once a second for up to ``bindTimeoutSeconds``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from ...framework.handle import JSONObject
from .binder import ANN_SELECTED_NODE, BinderError, PodVolumes, is_fully_bound
from .index import StorageIndex

__all__ = ["StorageUpdater", "api_updates", "bindings_done", "wait_for_bindings", "POLL_INTERVAL"]

POLL_INTERVAL = 1.0  # upstream polls every second


@runtime_checkable
class StorageUpdater(Protocol):
    """A cluster client that updates PVs and claims through the API server (``run``)."""

    def update_storage_object(self, obj: JSONObject) -> None:
        """PUT ``obj`` (a PersistentVolume or PersistentVolumeClaim, with its resourceVersion);
        raises when the API server refuses (a conflict: someone changed it meanwhile)."""
        ...


def _copy(raw: Mapping[str, object]) -> dict[str, object]:
    return copy.deepcopy(dict(raw))


def _meta(doc: dict[str, object]) -> dict[str, object]:
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        doc["metadata"] = meta
    return meta


def api_updates(volumes: PodVolumes) -> list[JSONObject]:
    """The objects to PUT for the node's assumed bindings: PVs first, then claims, as upstream."""
    out: list[JSONObject] = []
    for pv, pvc in volumes.static_bindings:
        doc = _copy(pv.raw)
        doc.setdefault("apiVersion", "v1")
        doc.setdefault("kind", "PersistentVolume")
        _meta(doc)["annotations"] = dict(pv.annotations)
        spec = doc.get("spec")
        spec = dict(spec) if isinstance(spec, Mapping) else {}
        spec["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": pvc.namespace,
                            "name": pvc.name, "uid": pvc.uid}
        doc["spec"] = spec
        out.append(doc)
    for pvc in volumes.provisions:
        doc = _copy(pvc.raw)
        doc.setdefault("apiVersion", "v1")
        doc.setdefault("kind", "PersistentVolumeClaim")
        _meta(doc)["annotations"] = dict(pvc.annotations)
        out.append(doc)
    return out


def bindings_done(index: StorageIndex, volumes: PodVolumes) -> bool:
    """Whether the PV controller finished the bindings; ``BinderError`` when one was undone."""
    for pv, pvc in volumes.static_bindings:
        current = index.pv(pv.name)
        if current is None:
            raise BinderError(f'failed to get pv "{pv.name}"')
        ref = current.claim_ref
        if ref is None or (ref.namespace, ref.name) != (pvc.namespace, pvc.name) or (ref.uid and ref.uid != pvc.uid):
            raise BinderError(f'pv "{pv.name}" claimRef is not set or was changed')
        claim = index.pvc(pvc.namespace, pvc.name)
        if claim is None:
            raise BinderError(f'failed to get pvc "{pvc.namespace}/{pvc.name}"')
        if not is_fully_bound(claim):
            return False
    for pvc in volumes.provisions:
        claim = index.pvc(pvc.namespace, pvc.name)
        if claim is None:
            raise BinderError(f'failed to get pvc "{pvc.namespace}/{pvc.name}"')
        if ANN_SELECTED_NODE not in claim.annotations:
            raise BinderError(f'selectedNode annotation reset for PVC "{pvc.name}"')
        if not is_fully_bound(claim):
            return False
    return True


def wait_for_bindings(index: StorageIndex, volumes: PodVolumes, timeout: float,
                      sleep: Callable[[float], None] = time.sleep,
                      clock: Callable[[], float] = time.monotonic) -> None:
    """Poll until the bindings are done; ``BinderError`` on a reset or when ``timeout`` passes.
    Runs on a binding worker thread: the informers update the index meanwhile."""
    deadline = clock() + timeout
    while True:
        try:
            if bindings_done(index, volumes):
                return
        except BinderError as err:
            raise BinderError(f"binding volumes: {err}") from None
        if clock() >= deadline:
            raise BinderError("binding volumes: context deadline exceeded")
        sleep(POLL_INTERVAL)
