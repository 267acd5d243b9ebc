"""The cluster's other DRA actors, played by the test beside ``kubesched run``.

* ``ClaimController``: kube-controller-manager's resourceclaim controller. For each pod
  entry naming a ``resourceClaimTemplateName`` it creates the claim (``generateName``
  ``<pod>-<entry>-``, the ``resource.kubernetes.io/pod-claim-name`` annotation, the pod as
  controlling owner, the template's labels, annotations and spec) and records it in the
  pod's ``status.resourceClaimStatuses``. Upstream's scheduler never does this.
* ``Driver``: a DRA driver. It publishes its ResourceSlices, and, once a claim allocated
  one of its devices with binding conditions, reports them met in ``status.devices``
  (``attach``), as a driver that attaches a device to the node would.

Both write through the test server's Python API, as any other client would write.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.apiserver import APIServer
from tests.apiserver.errors import StatusError

DRIVER = "gpu.example.com"
CLASS = "gpu.example.com"
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"


def device_class(name: str = CLASS, extended_resource_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
    if extended_resource_name is not None:
        spec["extendedResourceName"] = extended_resource_name
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def node_slice(node: str, gpus: int, *, binding_conditions: bool = False, generation: int = 1) -> dict[str, Any]:
    """One node's pool of ``gpus`` devices (``gpu-0`` ...), in one slice."""
    devices: list[dict[str, Any]] = []
    for index in range(gpus):
        device: dict[str, Any] = {"name": f"gpu-{index}", "attributes": {"index": {"int": index}},
                                  "capacity": {"memory": {"value": "16Gi"}}}
        if binding_conditions:
            device.update({"bindsToNode": True, "bindingConditions": ["attached"],
                           "bindingFailureConditions": ["failed"]})
        devices.append(device)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": generation, "resourceSliceCount": 1}, "devices": devices}}


def claim_spec(count: int = 1) -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS, "count": count}}]}}


def claim_template(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"metadata": {"labels": {"made-from": name}}, "spec": claim_spec()}}


def resource_claim(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": claim_spec()}


def with_claim(pod: dict[str, Any], entry: str, *, template: str | None = None,
               claim: str | None = None) -> dict[str, Any]:
    """``pod`` using a claim made from ``template``, or the existing claim ``claim``, in its container."""
    source = {"resourceClaimTemplateName": template} if template is not None else {"resourceClaimName": claim}
    pod["spec"].setdefault("resourceClaims", []).append({"name": entry, **source})
    pod["spec"]["containers"][0]["resources"].setdefault("claims", []).append({"name": entry})
    return pod


def claim_of(server: APIServer, pod_name: str, entry: str, namespace: str = "default") -> dict[str, Any] | None:
    """The claim a pod's entry uses (a template's, as the controller recorded it, or a named one)."""
    pod = server.get("Pod", namespace, pod_name)
    if pod is None:
        return None
    for item in pod["spec"].get("resourceClaims") or ():
        if item["name"] == entry and item.get("resourceClaimName"):
            return server.get("ResourceClaim", namespace, item["resourceClaimName"])
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
        if status["name"] == entry and status.get("resourceClaimName"):
            return server.get("ResourceClaim", namespace, status["resourceClaimName"])
    return None


class _Loop:
    def __init__(self, server: APIServer, period: float) -> None:
        self.server = server
        self.period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=type(self).__name__)
        self.errors: list[BaseException] = []

    def start(self) -> "_Loop":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                self.step()
            except StatusError:  # a conflict with the scheduler's writes: try again next round
                continue
            except BaseException as err:  # noqa: BLE001 - reported by the test
                self.errors.append(err)

    def step(self) -> None:
        raise NotImplementedError


class ClaimController(_Loop):
    """The resourceclaim controller's claim creation for pods' template entries."""

    def __init__(self, server: APIServer, period: float = 0.05) -> None:
        super().__init__(server, period)
        self.created: list[str] = []

    def step(self) -> None:
        for pod in self.server.list("Pod"):
            statuses = list((pod.get("status") or {}).get("resourceClaimStatuses") or ())
            recorded = {s["name"] for s in statuses}
            added = False
            for entry in pod["spec"].get("resourceClaims") or ():
                template_name = entry.get("resourceClaimTemplateName")
                if not template_name or entry["name"] in recorded:
                    continue
                md = pod["metadata"]
                template = self.server.get("ResourceClaimTemplate", md["namespace"], template_name)
                if template is None:
                    continue
                claim = self.server.create({
                    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {
                        "generateName": f"{md['name']}-{entry['name']}-", "namespace": md["namespace"],
                        "labels": dict((template["spec"].get("metadata") or {}).get("labels") or {}),
                        "annotations": {**((template["spec"].get("metadata") or {}).get("annotations") or {}),
                                        POD_CLAIM_NAME: entry["name"]},
                        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": md["name"], "uid": md["uid"],
                                             "controller": True, "blockOwnerDeletion": True}]},
                    "spec": template["spec"]["spec"]})
                statuses.append({"name": entry["name"], "resourceClaimName": claim["metadata"]["name"]})
                self.created.append(claim["metadata"]["name"])
                added = True
            if added:
                pod.setdefault("status", {})["resourceClaimStatuses"] = statuses
                self.server.update(pod)  # stale resourceVersion: Conflict, retried next round


class Driver(_Loop):
    """Reports a device's binding conditions met (or failed) once a claim allocated it."""

    def __init__(self, server: APIServer, *, outcome: str = "attached", failing_pools: frozenset[str] = frozenset(),
                 period: float = 0.1) -> None:
        super().__init__(server, period)
        self.outcome = outcome
        self.failing_pools = failing_pools  # devices of these pools report "failed" whatever ``outcome``
        self.attach_allowed = threading.Event()
        self.attached: list[str] = []

    def step(self) -> None:
        if not self.attach_allowed.is_set():
            return
        for claim in self.server.list("ResourceClaim"):
            status = claim.get("status") or {}
            results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or ()
            pending = [r for r in results if r.get("bindingConditions") and r["driver"] == DRIVER]
            if not pending or status.get("devices"):
                continue
            status["devices"] = [{
                "driver": r["driver"], "pool": r["pool"], "device": r["device"],
                "conditions": [{"type": outcome, "status": "True", "reason": "Done", "message": outcome,
                                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
                for r in pending for outcome in ["failed" if r["pool"] in self.failing_pools else self.outcome]]
            self.server.update(claim)
            self.attached.append(claim["metadata"]["name"])
