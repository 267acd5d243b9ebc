"""What kubectl drain does with one pod, by its filters (``kubectl/pkg/drain/filters.go``):
the first filter that keeps a pod decides, with kubectl's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.drain_rules import (
    DAEMONSET_FATAL,
    DAEMONSET_WARNING,
    LOCAL_STORAGE_FATAL,
    LOCAL_STORAGE_WARNING,
    UNMANAGED_FATAL,
    UNMANAGED_WARNING,
    DrainFlags,
    drain_verdict,
)


def pod(owner_kind: str | None = "ReplicaSet", api_version: str = "apps/v1", phase: str = "Running",
        empty_dir: bool = False, mirror: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "namespace": "default"}
    if owner_kind:
        meta["ownerReferences"] = [{"apiVersion": api_version, "kind": owner_kind, "name": "o", "uid": "u",
                                    "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "x"}
    spec: dict[str, Any] = {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}
    if empty_dir:
        spec["volumes"] = [{"name": "v", "emptyDir": {"medium": "Memory"}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


FORCE = DrainFlags(force=True)
IGNORE_DS = DrainFlags(ignore_daemonsets=True)
EMPTYDIR = DrainFlags(delete_emptydir_data=True)

CASES = [
    ("replicated pod", pod(), DrainFlags(), (True, "Okay", ""), ()),
    ("daemonset pod", pod("DaemonSet"), DrainFlags(), (False, "Error", DAEMONSET_FATAL), ()),
    ("daemonset pod, ignored", pod("DaemonSet"), IGNORE_DS, (False, "Warning", DAEMONSET_WARNING), ()),
    ("finished daemonset pod", pod("DaemonSet", phase="Succeeded"), DrainFlags(), (True, "Okay", ""), ()),
    ("DaemonSet of another group is no DaemonSet", pod("DaemonSet", api_version="acme.io/v1"), DrainFlags(),
     (True, "Okay", ""), ()),
    ("mirror pod", pod(None, mirror=True), DrainFlags(), (False, "Skip", ""), ()),
    ("finished mirror pod stays", pod(None, mirror=True, phase="Failed"), FORCE, (False, "Skip", ""), ()),
    ("emptyDir, even in memory", pod(empty_dir=True), DrainFlags(), (False, "Error", LOCAL_STORAGE_FATAL), ()),
    # kubectl keeps the last filter's status: the local storage warning is only in the list
    ("emptyDir, deleting its data", pod(empty_dir=True), EMPTYDIR, (True, "Okay", ""), (LOCAL_STORAGE_WARNING,)),
    ("finished pod with an emptyDir", pod(empty_dir=True, phase="Succeeded"), DrainFlags(), (True, "Okay", ""), ()),
    ("no controller", pod(None), DrainFlags(), (False, "Error", UNMANAGED_FATAL), ()),
    ("no controller, forced", pod(None), FORCE, (True, "Warning", UNMANAGED_WARNING), (UNMANAGED_WARNING,)),
    ("finished pod without a controller", pod(None, phase="Failed"), DrainFlags(), (True, "Okay", ""), ()),
    ("no controller and an emptyDir: local storage first", pod(None, empty_dir=True), FORCE,
     (False, "Error", LOCAL_STORAGE_FATAL), ()),
    ("no controller and an emptyDir, both flags", pod(None, empty_dir=True), DrainFlags(True, False, True),
     (True, "Warning", UNMANAGED_WARNING), (LOCAL_STORAGE_WARNING, UNMANAGED_WARNING)),
]


@pytest.mark.parametrize("name, raw, flags, want, warnings", CASES, ids=[c[0] for c in CASES])
def test_drain_verdict(name: str, raw: dict[str, Any], flags: DrainFlags, want: tuple[bool, str, str],
                       warnings: tuple[str, ...]) -> None:
    verdict, seen = drain_verdict(raw, flags)
    assert (verdict.delete, verdict.reason, verdict.message) == want
    assert seen == warnings
