"""VolumeBinding's PreBind against an API server: what it writes, and when it is done."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kubesched.objects.storage import ClaimRef, parse_pv, parse_pvc
from kubesched.plugins.volumebinding.binder import ANN_SELECTED_NODE, BinderError, PodVolumes
from kubesched.plugins.volumebinding.live import api_updates, bindings_done, wait_for_bindings

PV = parse_pv({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1", "resourceVersion": "7"},
               "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                        "local": {"path": "/d"}}})
CLAIM = parse_pvc({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "c1", "namespace": "default", "uid": "u1", "resourceVersion": "9"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                            "resources": {"requests": {"storage": "1Gi"}}}})


class Index:
    """The informers' view the binder polls."""

    def __init__(self) -> None:
        self.pvs = {"pv1": replace(PV, claim_ref=ClaimRef("default", "c1", "u1"))}
        self.pvcs = {("default", "c1"): CLAIM}

    def pv(self, name: str):  # noqa: ANN201 - duck-typed StorageIndex
        return self.pvs.get(name)

    def pvc(self, namespace: str, name: str):  # noqa: ANN201
        return self.pvcs.get((namespace, name))


def _bind_claim(index: Index) -> None:
    index.pvcs[("default", "c1")] = replace(CLAIM, volume_name="pv1",
                                            annotations={"pv.kubernetes.io/bind-completed": "yes"})


def test_a_static_binding_is_written_as_the_pv_with_its_claim_ref_and_resource_version() -> None:
    assumed = replace(PV, claim_ref=ClaimRef("default", "c1", "u1"))
    [doc] = api_updates(PodVolumes(static_bindings=[(assumed, CLAIM)]))
    assert doc["kind"] == "PersistentVolume"
    assert doc["metadata"]["resourceVersion"] == "7"
    assert doc["spec"]["claimRef"] == {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                       "namespace": "default", "name": "c1", "uid": "u1"}


def test_a_claim_to_provision_is_written_with_its_selected_node() -> None:
    annotated = replace(CLAIM, annotations={ANN_SELECTED_NODE: "n2"})
    [doc] = api_updates(PodVolumes(provisions=[annotated]))
    assert doc["kind"] == "PersistentVolumeClaim"
    assert doc["metadata"]["annotations"] == {ANN_SELECTED_NODE: "n2"}


def test_bindings_are_done_once_the_claim_is_bound_with_bind_completed() -> None:
    index = Index()
    volumes = PodVolumes(static_bindings=[(PV, CLAIM)])
    assert not bindings_done(index, volumes)  # type: ignore[arg-type]
    _bind_claim(index)
    assert bindings_done(index, volumes)  # type: ignore[arg-type]


def test_a_claim_ref_taken_away_is_an_error() -> None:
    index = Index()
    index.pvs["pv1"] = replace(PV, claim_ref=None)
    with pytest.raises(BinderError, match="claimRef"):
        bindings_done(index, PodVolumes(static_bindings=[(PV, CLAIM)]))  # type: ignore[arg-type]


def test_waiting_gives_up_at_the_timeout_as_upstreams_poll() -> None:
    now = [0.0]
    with pytest.raises(BinderError, match="binding volumes: context deadline exceeded"):
        wait_for_bindings(Index(), PodVolumes(static_bindings=[(PV, CLAIM)]), 3.0,  # type: ignore[arg-type]
                          sleep=lambda s: now.__setitem__(0, now[0] + s), clock=lambda: now[0])
    assert now[0] == 3.0
