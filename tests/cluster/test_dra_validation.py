"""DRA objects the API server would refuse are bad input: one line naming the object and the field, nothing loaded."""

from __future__ import annotations

import pytest

from kubesched.cluster.snapshot import SnapshotError, snapshot_from_objects
from kubesched.plugins.registry import in_tree_registry

KINDS = frozenset(k for _, k in in_tree_registry().object_kinds())
API = "resource.k8s.io/v1"


def _load(*objects):
    problems = []
    snapshot_from_objects([("dump.json", o) for o in objects], problems, plugin_kinds=KINDS)
    return [str(p) for p in problems]


def _slice(*devices):
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "n1", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": d} for d in devices]}}


def test_a_slice_with_duplicate_device_names_is_refused():
    assert _load(_slice("a", "a")) == ['dump.json: ResourceSlice s spec.devices[1].name: Duplicate value: "a"']


@pytest.mark.parametrize("kind, doc, field", [
    ("DeviceClass", {"spec": {"selectors": [{"cel": {"expression": "device.driver =="}}]}}, "spec.selectors[0].cel.expression"),
    ("ResourceClaim", {"spec": {"devices": {"requests": [{"name": "r", "exactly": {
        "deviceClassName": "c", "selectors": [{"cel": {"expression": "device.("}}]}}]}}},
     "spec.devices.requests[0].exactly.selectors[0].cel.expression"),
])
def test_a_selector_that_does_not_compile_is_refused(kind, doc, field):
    problems = _load({"apiVersion": API, "kind": kind, "metadata": {"name": "x", "namespace": "default"}, **doc})
    assert len(problems) == 1
    assert problems[0].startswith(f"dump.json: {kind} ")
    assert f" {field}: Invalid value: " in problems[0]
    assert "\n" not in problems[0]


def test_valid_dra_objects_load():
    assert _load(_slice("a", "b")) == []


def test_admin_access_outside_a_labelled_namespace_is_refused():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    admin = {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "team"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]}}}
    problems = _load(namespace, admin)
    assert len(problems) == 1
    assert problems[0].startswith("dump.json: ResourceClaim team/c spec.devices.requests[0].adminAccess: Forbidden: ")
    labelled = {**namespace, "metadata": {"name": "team", "labels": {"resource.kubernetes.io/admin-access": "true"}}}
    assert _load(labelled, admin) == []
