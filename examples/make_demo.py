"""Generate examples/demo-cluster.yaml: a realistic 54-node, 3-zone cluster snapshot.

Deterministic (fixed seed), so the shipped file can be regenerated and diffed:

    python examples/make_demo.py > examples/demo-cluster.yaml

The cluster: a general pool, a memory pool, a GPU pool (tainted), infra nodes
(tainted), one cordoned node and one under maintenance (NoExecute), spread over
three zones; system DaemonSet-like pods and running deployments already bound;
pending pods from several deployments, some of which cannot fit anywhere.
"""

from __future__ import annotations

import random
import sys

import yaml

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
RNG = random.Random(20261122)
CREATED = "2026-11-01T08:00:00Z"


def node(name: str, zone: str, pool: str, instance: str, cpu: str, memory: str, pods: int = 110,
         taints: list | None = None, extra: dict | None = None, unschedulable: bool = False,
         images: list | None = None) -> dict:
    allocatable = {"cpu": cpu, "memory": memory, "pods": str(pods), "ephemeral-storage": "100Gi"}
    allocatable.update(extra or {})
    spec: dict = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
        spec.setdefault("taints", []).append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/region": "us-east-1",
                "topology.kubernetes.io/zone": zone,
                "node.kubernetes.io/instance-type": instance,
                "pool": pool,
            },
        },
        "spec": spec,
        "status": {
            "capacity": dict(allocatable),
            "allocatable": allocatable,
            "images": images or [],
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, namespace: str, app: str, cpu: str | None, memory: str | None, node_name: str = "",
        priority_class: str = "", extra_spec: dict | None = None, labels: dict | None = None,
        scheduler: str = "default-scheduler", created: str = CREATED, image: str = "registry.example.com/app:1.0",
        host_port: int | None = None) -> dict:
    requests = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    container: dict = {"name": app, "image": image, "resources": {"requests": requests} if requests else {}}
    if host_port:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port, "protocol": "TCP"}]
    spec: dict = {"schedulerName": scheduler, "containers": [container]}
    if node_name:
        spec["nodeName"] = node_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    spec.update(extra_spec or {})
    meta_labels = {"app": app}
    meta_labels.update(labels or {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": meta_labels, "creationTimestamp": created,
                     "uid": f"uid-{namespace}-{name}"},
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def suffix() -> str:
    return "".join(RNG.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))


def build() -> list[dict]:
    items: list[dict] = []
    items += [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "critical-apps"}, "value": 100000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch-low"}, "value": -10},
    ]
    for ns, team in (("shop", "retail"), ("ml", "research"), ("batch", "data"), ("monitoring", "platform")):
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns, "team": team}}})
    nodes: list[dict] = []
    web_image = [{"names": ["registry.example.com/web:2.3"], "sizeBytes": 450 * 2**20}]
    for i in range(30):
        zone = ZONES[i % 3]
        nodes.append(node(f"general-{i:02d}", zone, "general", "m6i.xlarge", "4", "16Gi",
                          images=web_image if i % 2 == 0 else None))
    for i in range(12):
        nodes.append(node(f"memory-{i:02d}", ZONES[i % 3], "memory", "r6i.2xlarge", "8", "64Gi"))
    for i in range(6):
        nodes.append(node(f"gpu-{i:02d}", ZONES[i % 3], "gpu", "p3.8xlarge", "32", "244Gi",
                          taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                          extra={"nvidia.com/gpu": "4"}))
    for i in range(4):
        nodes.append(node(f"infra-{i:02d}", ZONES[i % 3], "infra", "m6i.large", "2", "8Gi",
                          taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]))
    nodes.append(node("general-cordoned", "us-east-1a", "general", "m6i.xlarge", "4", "16Gi", unschedulable=True))
    nodes.append(node("general-maint", "us-east-1b", "general", "m6i.xlarge", "4", "16Gi",
                      taints=[{"key": "maintenance", "value": "kernel-upgrade", "effect": "NoExecute"}]))
    items += nodes

    # Bound pods: a node agent on every node, running services on the general and memory pools.
    for n in nodes:
        name = n["metadata"]["name"]
        items.append(pod(f"node-agent-{name}", "monitoring", "node-agent", "100m", "128Mi", node_name=name,
                         extra_spec={"tolerations": [{"operator": "Exists"}]}, host_port=9100))
    general = [n["metadata"]["name"] for n in nodes if n["metadata"]["labels"]["pool"] == "general"][:30]
    memory = [n["metadata"]["name"] for n in nodes if n["metadata"]["labels"]["pool"] == "memory"]
    for i in range(45):
        items.append(pod(f"checkout-{suffix()}", "shop", "checkout", RNG.choice(["500m", "1", "1500m"]),
                         RNG.choice(["1Gi", "2Gi", "3Gi"]), node_name=general[i % len(general)]))
    for i in range(16):
        items.append(pod(f"redis-{i}", "shop", "redis", "2", RNG.choice(["16Gi", "24Gi", "40Gi"]),
                         node_name=memory[i % len(memory)]))
    items.append(pod("trainer-a-0", "ml", "trainer-a", "16", "64Gi", node_name="gpu-00",
                     extra_spec={"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}))
    items[-1]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "3"
    items.append(pod("old-job-done", "batch", "old-job", "2", "2Gi", node_name="general-00"))
    items[-1]["status"]["phase"] = "Succeeded"

    # Pending pods, created over a few minutes.
    minute = [0]

    def created() -> str:
        minute[0] += 1
        return f"2026-11-01T09:{minute[0] // 60:02d}:{minute[0] % 60:02d}Z"

    for i in range(24):  # a frontend that prefers zone a and ships an image some nodes have cached
        items.append(pod(f"web-{suffix()}", "shop", "web", "250m", "512Mi", created=created(),
                         image="registry.example.com/web:2.3", labels={"tier": "frontend"},
                         extra_spec={"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                             {"weight": 50, "preference": {"matchExpressions": [
                                 {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]}]}}]}},
                             "topologySpreadConstraints": [
                                 {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                                  "labelSelector": {"matchLabels": {"app": "web"}}}]}))
    # The API belongs to a Service, so PodTopologySpread's system default constraints spread it.
    items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "shop"},
                  "spec": {"selector": {"app": "api"}, "ports": [{"port": 80}]}})
    for i in range(10):  # an API on the general pool, critical, preferring to sit near a cache
        items.append(pod(f"api-{suffix()}", "shop", "api", "1", "2Gi", created=created(), priority_class="critical-apps",
                         extra_spec={"nodeSelector": {"pool": "general"}, "affinity": {"podAffinity": {
                             "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 20, "podAffinityTerm": {
                                 "topologyKey": "topology.kubernetes.io/zone",
                                 "labelSelector": {"matchLabels": {"app": "redis"}}}}]}}}))
    for i in range(6):  # caches needing big memory, one per node
        items.append(pod(f"cache-{suffix()}", "shop", "cache", "1", "20Gi", created=created(),
                         extra_spec={"affinity": {
                             "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                                 "nodeSelectorTerms": [{"matchExpressions": [
                                     {"key": "pool", "operator": "In", "values": ["memory"]}]}]}},
                             "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                                 {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "cache"}}}]},
                         }}))
    for i in range(4):  # a quorum service wanting one member per zone: the fourth has nowhere to go
        items.append(pod(f"zk-{i}", "shop", "zk", "500m", "1Gi", created=created(),
                         extra_spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                             {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": "zk"}}}]}}}))
    for i in range(5):  # GPU training: tolerates the GPU taint, asks for GPUs
        p = pod(f"trainer-b-{i}", "ml", "trainer-b", "8", "32Gi", created=created(),
                extra_spec={"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]})
        p["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "2"
        items.append(p)
    for i in range(8):  # low-priority batch work with an init container and a sidecar
        p = pod(f"etl-{suffix()}", "batch", "etl", "1500m", "4Gi", created=created(), priority_class="batch-low")
        p["spec"]["initContainers"] = [
            {"name": "fetch", "image": "registry.example.com/fetch:1", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
            {"name": "log-shipper", "image": "registry.example.com/shipper:1", "restartPolicy": "Always",
             "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}},
        ]
        items.append(p)
    # Pods that cannot fit: too big, a label no node has, a host port every node already uses.
    items.append(pod("analytics-huge-0", "batch", "analytics", "48", "128Gi", created=created()))
    items.append(pod("nvme-db-0", "shop", "nvme-db", "2", "8Gi", created=created(),
                     extra_spec={"nodeSelector": {"disktype": "nvme"}}))
    items.append(pod("exporter-extra-0", "monitoring", "exporter", "50m", "64Mi", created=created(), host_port=9100))
    items.append(pod("gpu-greedy-0", "ml", "gpu-greedy", "4", "16Gi", created=created(),
                     extra_spec={"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}))
    items[-1]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "8"
    # A pod for another scheduler, and one held back by a scheduling gate.
    items.append(pod("packed-0", "batch", "packed", "500m", "1Gi", created=created(), scheduler="bin-packing-scheduler"))
    items.append(pod("gated-0", "batch", "gated", "500m", "1Gi", created=created(),
                     extra_spec={"schedulingGates": [{"name": "example.com/quota-check"}]}))
    return items


def main() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": build()}
    sys.stdout.write("# Generated by examples/make_demo.py; a snapshot as `kubectl get nodes,pods,priorityclasses,namespaces -A -o yaml` writes it.\n")
    yaml.safe_dump(doc, sys.stdout, sort_keys=False, width=120)


if __name__ == "__main__":
    main()
