"""`kubesched run` with volumes: VolumeBinding's PreBind writes its decisions through the API
and waits for the PV controller, whose part the test plays."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.apiserver import APIServer
from tests.live.conftest import assert_invariants
from tests.live.harness import Kubesched, node, node_of, pod, scheduled_condition, scheduler_config, wait_until

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
SELECTED_NODE = "volume.kubernetes.io/selected-node"


def _storage_class(name: str = "local") -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}


def _local_pv(name: str, on_node: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                     "local": {"path": "/mnt/disk"}, "persistentVolumeReclaimPolicy": "Retain",
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "kubernetes.io/hostname", "operator": "In", "values": [on_node]}]}]}}},
            "status": {"phase": "Available"}}


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                     "resources": {"requests": {"storage": "5Gi"}}},
            "status": {"phase": "Pending"}}


def _pod_with_claim(name: str, claim: str) -> dict[str, Any]:
    obj = pod(name)
    obj["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return obj


class PVController:
    """The PV controller's part: a PV whose claimRef names a claim not yet bound binds them both."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.bound: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "PVController":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for pv in self.server.list("PersistentVolume"):
                ref = (pv.get("spec") or {}).get("claimRef")
                if not ref:
                    continue
                claim = self.server.get("PersistentVolumeClaim", ref["namespace"], ref["name"])
                if claim is None or (claim.get("spec") or {}).get("volumeName"):
                    continue
                claim["spec"]["volumeName"] = pv["metadata"]["name"]
                claim["metadata"].setdefault("annotations", {})[BIND_COMPLETED] = "yes"
                claim["status"] = {"phase": "Bound"}
                self.server.update(claim)
                pv["status"] = {"phase": "Bound"}
                self.server.update(pv)
                self.bound.append(ref["name"])


@pytest.fixture
def storage(server: APIServer) -> Iterator[None]:
    server.create(node("n1"))
    server.create(node("n2"))
    server.create(_storage_class())
    server.create(_local_pv("disk-on-n2", "n2"))
    server.create(_claim("data"))
    yield


def test_a_pod_whose_claim_waits_for_its_first_consumer_goes_where_the_local_pv_is(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], storage: None) -> None:
    controller = PVController(server).start()
    try:
        sched = Kubesched(server, kubeconfig).start()
        started.append(sched)
        server.create(_pod_with_claim("db", "data"))
        wait_until(lambda: node_of(server, "db") == "n2", what="the pod bound beside its volume")
        pv = server.get("PersistentVolume", None, "disk-on-n2")
        assert pv is not None
        assert pv["spec"]["claimRef"]["name"] == "data"  # written by kubesched's PreBind
        claim = server.get("PersistentVolumeClaim", "default", "data")
        assert claim is not None and claim["spec"]["volumeName"] == "disk-on-n2"
        assert controller.bound == ["data"]
        assert_invariants(server, sched)
    finally:
        controller.stop()


def test_without_a_pv_controller_prebind_gives_up_after_bind_timeout_seconds(
        server: APIServer, kubeconfig: Path, started: list[Kubesched], storage: None) -> None:
    config = scheduler_config({"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 1}}]}]})
    sched = Kubesched(server, kubeconfig, config).start()
    started.append(sched)
    server.create(_pod_with_claim("db", "data"))
    wait_until(lambda: "binding volumes: context deadline exceeded" in (scheduled_condition(server, "db") or {}).get(
        "message", ""), timeout=15, what="the PreBind timeout reported")
    assert node_of(server, "db") is None
    cond = scheduled_condition(server, "db")
    assert cond is not None and cond["reason"] == "SchedulerError"
