"""What ``kubectl drain`` does with each pod of a node, by its filters.

kubectl's drain helper (``k8s.io/kubectl/pkg/drain``, ``filters.go``) runs every pod of the
node through its filters in order (deleted long ago, DaemonSet, mirror, local storage, no
controller) and stops at the first that keeps the pod. A filter keeps a pod quietly
(a mirror pod), with a warning (DaemonSet pods under ``--ignore-daemonsets``) or with an
error (a pod without a controller, without ``--force``); any error makes ``kubectl
drain`` refuse the whole drain, naming the pods under its message
(``cannot delete Pods that declare no controller (use --force to override): ns/p``).
A pod no filter keeps is deleted: its controller recreates it elsewhere, unless it has
none (``--force``) or it had finished (``Succeeded``/``Failed``: nothing restarts it).

The messages are kubectl's own, so a reader recognises them. The DaemonSet filter also
asks the API server whether the DaemonSet still exists; a snapshot holds no DaemonSets,
so each is taken to exist.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DrainFlags", "DrainVerdict", "drain_verdict", "controller_of", "is_finished", "MIRROR_ANNOTATION",
           "DAEMONSET_FATAL", "DAEMONSET_WARNING", "LOCAL_STORAGE_FATAL", "LOCAL_STORAGE_WARNING", "UNMANAGED_FATAL",
           "UNMANAGED_WARNING"]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"

# How a filter ends (kubectl's PodDeleteStatus reasons).
OKAY = "Okay"
SKIP = "Skip"
WARNING = "Warning"
ERROR = "Error"


@dataclass(frozen=True, slots=True)
class DrainFlags:
    """``kubectl drain``'s flags that change which pods it deletes."""

    force: bool = False
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False


@dataclass(frozen=True, slots=True)
class DrainVerdict:
    """The last filter's word on a pod: ``delete`` or keep, and why (``reason`` one of
    Okay, Skip, Warning, Error; ``message`` kubectl's text for a warning or an error)."""

    delete: bool
    reason: str = OKAY
    message: str = ""

    @property
    def refused(self) -> bool:
        """kubectl drain refuses to go on because of this pod."""
        return self.reason == ERROR


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def controller_of(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``metav1.GetControllerOf``: the owner reference with ``controller: true``."""
    owners = _meta(pod).get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return owner
    return None


def is_finished(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status")
    return isinstance(status, Mapping) and status.get("phase") in ("Succeeded", "Failed")


def _has_empty_dir(pod: Mapping[str, Any]) -> bool:
    """kubectl's ``hasLocalStorage``: any ``emptyDir`` volume, whatever its medium."""
    spec = pod.get("spec")
    volumes = spec.get("volumes") if isinstance(spec, Mapping) else None
    return isinstance(volumes, list) and any(isinstance(v, Mapping) and v.get("emptyDir") is not None for v in volumes)


def _daemonset(pod: Mapping[str, Any], flags: DrainFlags) -> DrainVerdict:
    owner = controller_of(pod)
    if owner is None or owner.get("kind") != "DaemonSet" or owner.get("apiVersion") != "apps/v1":
        return DrainVerdict(True)
    if is_finished(pod):
        return DrainVerdict(True)
    if not flags.ignore_daemonsets:
        return DrainVerdict(False, ERROR, DAEMONSET_FATAL)
    return DrainVerdict(False, WARNING, DAEMONSET_WARNING)


def _mirror(pod: Mapping[str, Any], flags: DrainFlags) -> DrainVerdict:
    annotations = _meta(pod).get("annotations")
    if isinstance(annotations, Mapping) and MIRROR_ANNOTATION in annotations:
        return DrainVerdict(False, SKIP)
    return DrainVerdict(True)


def _local_storage(pod: Mapping[str, Any], flags: DrainFlags) -> DrainVerdict:
    if not _has_empty_dir(pod) or is_finished(pod):
        return DrainVerdict(True)
    if not flags.delete_emptydir_data:
        return DrainVerdict(False, ERROR, LOCAL_STORAGE_FATAL)
    return DrainVerdict(True, WARNING, LOCAL_STORAGE_WARNING)


def _unreplicated(pod: Mapping[str, Any], flags: DrainFlags) -> DrainVerdict:
    if is_finished(pod) or controller_of(pod) is not None:
        return DrainVerdict(True)
    if flags.force:
        return DrainVerdict(True, WARNING, UNMANAGED_WARNING)
    return DrainVerdict(False, ERROR, UNMANAGED_FATAL)


_FILTERS = (_daemonset, _mirror, _local_storage, _unreplicated)


def drain_verdict(pod: Mapping[str, Any], flags: DrainFlags) -> tuple[DrainVerdict, tuple[str, ...]]:
    """The verdict of kubectl's filters on ``pod`` (the first that keeps it, else the last),
    and the warnings of the filters that let it through before (a deleted pod with local
    storage under ``--delete-emptydir-data`` says so even when a later filter warns too)."""
    warnings: list[str] = []
    verdict = DrainVerdict(True)
    for check in _FILTERS:
        verdict = check(pod, flags)
        if not verdict.delete:
            break
        if verdict.reason == WARNING:
            warnings.append(verdict.message)
    return verdict, tuple(warnings)
