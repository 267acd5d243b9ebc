"""Cluster dumps shaped like ``kubectl get nodes,pods -A -o json|yaml`` of a real cluster.

The scheduler_perf templates (``common.py``) are minimal objects; what an operator's dump
or an informer's LIST carries is much more: status conditions, container statuses, node
images, projected service-account volumes, owner references. Ingest cost follows those
bytes, so the ingest benchmark reads objects built here, not the minimal templates.

Pods come from Deployments (``app-NNNN``, 20 replicas each, one of 12 request shapes),
spread round-robin over the nodes; nodes carry cloud-provider labels, 5 conditions, 25
cached images and their addresses.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterator

STAMP = "2026-10-01T08:00:00Z"
SHAPES = [("100m", "128Mi"), ("250m", "256Mi"), ("500m", "512Mi"), ("1", "1Gi"), ("2", "4Gi"), ("50m", "64Mi"),
          ("200m", "1Gi"), ("750m", "1536Mi"), ("1500m", "3Gi"), ("300m", "384Mi"), ("125m", "200Mi"), ("4", "8Gi")]
REPLICAS = 20


def _hex(text: str, size: int) -> str:
    return hashlib.blake2b(text.encode(), digest_size=size).hexdigest()


def _uid(text: str) -> str:
    h = _hex(text, 16)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def node(i: int, zones: int = 3) -> dict[str, Any]:
    name = f"ip-10-{i // 65536 % 256}-{i // 256 % 256}-{i % 256}.ec2.internal"
    zone = f"us-east-1{'abcdef'[i % zones]}"
    conditions = [
        {"type": t, "status": "False", "reason": f"KubeletHas{r}", "message": f"kubelet has {m}",
         "lastHeartbeatTime": STAMP, "lastTransitionTime": STAMP}
        for t, r, m in (("MemoryPressure", "SufficientMemory", "sufficient memory available"),
                        ("DiskPressure", "NoDiskPressure", "no disk pressure"),
                        ("PIDPressure", "SufficientPID", "sufficient PID available"))
    ] + [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
          "lastHeartbeatTime": STAMP, "lastTransitionTime": STAMP}]
    images = [{"names": [f"registry.example.com/team-{k}/service-{k}@sha256:{_hex(str(k), 32)}",
                         f"registry.example.com/team-{k}/service-{k}:v1.{k}.0"], "sizeBytes": 50_000_000 + k * 1_000_003}
              for k in range((i % 7) * 3, (i % 7) * 3 + 25)]
    capacity = {"cpu": "16", "ephemeral-storage": "104845292Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                "memory": "65049884Ki", "pods": "110"}
    allocatable = {**capacity, "cpu": "15890m", "ephemeral-storage": "95551679124", "memory": "64030000Ki"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "annotations": {"alpha.kubernetes.io/provided-node-ip": f"10.0.{i // 256 % 256}.{i % 256}",
                            "node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": STAMP,
            "labels": {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "m5.4xlarge",
                       "beta.kubernetes.io/os": "linux", "eks.amazonaws.com/nodegroup": f"pool-{i % 4}",
                       "failure-domain.beta.kubernetes.io/region": "us-east-1",
                       "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64",
                       "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                       "node.kubernetes.io/instance-type": "m5.4xlarge", "topology.kubernetes.io/region": "us-east-1",
                       "topology.kubernetes.io/zone": zone},
            "name": name, "resourceVersion": str(1_000_000 + i), "uid": _uid(name),
        },
        "spec": {"providerID": f"aws:///{zone}/i-{_hex(name, 8)}"},
        "status": {
            "addresses": [{"address": f"10.0.{i // 256 % 256}.{i % 256}", "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}, {"address": name, "type": "InternalDNS"}],
            "allocatable": allocatable, "capacity": capacity, "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "bootID": _uid(f"boot-{i}"), "containerRuntimeVersion": "containerd://1.7.27",
                         "kernelVersion": "6.1.132", "kubeProxyVersion": "v1.36.2", "kubeletVersion": "v1.36.2",
                         "machineID": _hex(f"m-{i}", 16), "operatingSystem": "linux", "osImage": "Amazon Linux 2023",
                         "systemUUID": _uid(f"sys-{i}")},
        },
    }


def pod(j: int, node_name: str, namespaces: int = 50) -> dict[str, Any]:
    app = j // REPLICAS
    cpu, memory = SHAPES[app % len(SHAPES)]
    namespace = f"team-{app % namespaces}"
    template_hash = _hex(f"app-{app}", 5)[:10]
    suffix = f"{(j * 40503) % 1048576:05x}"
    name = f"app-{app:05d}-{template_hash}-{suffix}"
    token = f"kube-api-access-{_hex(name, 3)[:5]}"
    image = f"registry.example.com/team-{app % 40}/service-{app % 40}:v1.{app % 40}.0"
    ip = f"10.{1 + j // 65536 % 250}.{j // 256 % 256}.{j % 256}"
    conditions = [{"lastProbeTime": None, "lastTransitionTime": STAMP, "status": "True", "type": t}
                  for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "creationTimestamp": STAMP, "generateName": f"app-{app:05d}-{template_hash}-",
            "labels": {"app.kubernetes.io/name": f"app-{app:05d}", "app.kubernetes.io/part-of": f"team-{app % namespaces}",
                       "pod-template-hash": template_hash},
            "name": name, "namespace": namespace,
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "ReplicaSet", "name": f"app-{app:05d}-{template_hash}",
                                 "uid": _uid(f"rs-{app}")}],
            "resourceVersion": str(2_000_000 + j), "uid": _uid(name),
        },
        "spec": {
            "containers": [{
                "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "POD_NAME",
                         "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
                "image": image, "imagePullPolicy": "IfNotPresent", "name": "app",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "readinessProbe": {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                   "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1},
                "resources": {"limits": {"memory": memory}, "requests": {"cpu": cpu, "memory": memory}},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token,
                                  "readOnly": True}],
            }],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "nodeName": node_name,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
            "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "tolerationSeconds": 300},
                            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                             "tolerationSeconds": 300}],
            "volumes": [{"name": token, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                            "path": "namespace"}]}}]}}],
        },
        "status": {
            "conditions": conditions,
            "containerStatuses": [{"containerID": f"containerd://{_hex(name, 32)}", "image": image,
                                   "imageID": f"{image.split(':')[0]}@sha256:{_hex(image, 32)}", "lastState": {},
                                   "name": "app", "ready": True, "restartCount": 0, "started": True,
                                   "state": {"running": {"startedAt": STAMP}}}],
            "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "phase": "Running", "podIP": ip,
            "podIPs": [{"ip": ip}], "qosClass": "Burstable", "startTime": STAMP,
        },
    }


def lean_pod(j: int, node_name: str, namespaces: int = 50) -> dict[str, Any]:
    """A pod with only what scheduler_perf's template and the API server give it (about 1.2 KB of
    indented JSON): the size of the issue's 1,000,000-pod dump."""
    app = j // REPLICAS
    cpu, memory = SHAPES[app % len(SHAPES)]
    template_hash = _hex(f"app-{app}", 5)[:10]
    name = f"app-{app:05d}-{template_hash}-{(j * 40503) % 1048576:05x}"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"creationTimestamp": STAMP, "labels": {"app": f"app-{app:05d}", "pod-template-hash": template_hash},
                     "name": name, "namespace": f"team-{app % namespaces}",
                     "ownerReferences": [{"apiVersion": "apps/v1", "controller": True, "kind": "ReplicaSet",
                                          "name": f"app-{app:05d}-{template_hash}", "uid": _uid(f"rs-{app}")}],
                     "resourceVersion": str(2_000_000 + j), "uid": _uid(name)},
        "spec": {"containers": [{"image": "registry.k8s.io/pause:3.10.1", "name": "pause",
                                 "ports": [{"containerPort": 80, "protocol": "TCP"}],
                                 "resources": {"limits": {"cpu": cpu, "memory": memory},
                                               "requests": {"cpu": cpu, "memory": memory}}}],
                 "nodeName": node_name, "priority": 0, "schedulerName": "default-scheduler"},
        "status": {"phase": "Running", "podIP": f"10.{1 + j // 65536 % 250}.{j // 256 % 256}.{j % 256}",
                   "qosClass": "Guaranteed", "startTime": STAMP},
    }


def lean_node(i: int, zones: int = 3) -> dict[str, Any]:
    """A node with labels, capacity and a Ready condition, no images (about 1.3 KB)."""
    full = node(i, zones)
    status = full["status"]
    full["status"] = {"allocatable": status["allocatable"], "capacity": status["capacity"],
                      "conditions": status["conditions"][-1:], "nodeInfo": status["nodeInfo"]}
    full["metadata"].pop("annotations")
    return full


def node_names(count: int) -> list[str]:
    return [f"ip-10-{i // 65536 % 256}-{i // 256 % 256}-{i % 256}.ec2.internal" for i in range(count)]


def objects(nodes: int, pods: int, lean: bool = False) -> Iterator[dict[str, Any]]:
    """``nodes`` nodes, then ``pods`` bound pods round-robin over them."""
    make_node, make_pod = (lean_node, lean_pod) if lean else (node, pod)
    for i in range(nodes):
        yield make_node(i)
    names = node_names(nodes)
    for j in range(pods):
        yield make_pod(j, names[j % nodes])
