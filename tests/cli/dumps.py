"""Dumps written the way kubectl writes them, for the simulate tests.

``kubectl get ... -o yaml`` gives every object ``metadata.managedFields``, a
``resourceVersion`` and ``uid``, a ``status``, and pods their ``ownerReferences``;
a single kind comes as a typed list (``PodList``) whose items carry no ``kind`` or
``apiVersion``, several kinds as a ``List`` whose items do.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

MANAGED = [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
            "manager": "kube-controller-manager", "operation": "Update", "time": "2026-01-01T00:00:00Z"}]


def node(name: str, cpu: str = "4", memory: str = "8Gi", zone: str = "z1", labels: dict | None = None,
         pool: str | None = None) -> dict:
    meta_labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                   "kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "m5.xlarge"}
    if pool:
        meta_labels["eks.amazonaws.com/nodegroup"] = pool
    meta_labels.update(labels or {})
    resources = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "1", "labels": meta_labels,
                         "managedFields": MANAGED, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"providerID": f"aws:///{zone}/{name}"},
            "status": {"capacity": dict(resources), "allocatable": dict(resources),
                       "conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.34.0"}}}


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", node_name: str = "", namespace: str = "default",
        owner: str | None = None, phase: str | None = None, labels: dict | None = None, **spec_extra) -> dict:
    spec: dict = {"containers": [{"name": "app", "image": "nginx:1.27",
                                  "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                  "schedulerName": "default-scheduler", "restartPolicy": "Always"}
    if node_name:
        spec["nodeName"] = node_name
    spec.update(spec_extra)
    meta: dict = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "resourceVersion": "7",
                  "managedFields": MANAGED, "creationTimestamp": "2026-01-01T00:00:00Z", "labels": dict(labels or {})}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": f"uid-{owner}",
                                    "controller": True, "blockOwnerDeletion": True}]
    status = {"phase": phase or ("Running" if node_name else "Pending"), "qosClass": "Burstable"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def other(kind: str, name: str, api_version: str = "v1", namespace: str | None = "default", **fields) -> dict:
    meta: dict = {"name": name, "uid": f"uid-{kind}-{name}", "managedFields": MANAGED}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def typed_list(kind: str, items: list[dict]) -> dict:
    """``kubectl get pods -o yaml`` on a single kind: items lose their kind and apiVersion."""
    stripped = [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in items]
    return {"apiVersion": "v1", "kind": f"{kind}List", "metadata": {"resourceVersion": "99"}, "items": stripped}


def write_list(path: Path, items: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                    "items": items}))
    return path


def write_json(path: Path, document: dict) -> Path:
    path.write_text(json.dumps(document, indent=4))
    return path


def read_explain(path: Path) -> list[dict]:
    """The --explain file: one JSON object a line."""
    return [json.loads(line) for line in path.read_text().splitlines()]
