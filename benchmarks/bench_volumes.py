"""Volume scheduling throughput, mirroring upstream scheduler_perf's SchedulingInTreePVs,
SchedulingMigratedInTreePVs and SchedulingCSIPVs (``volumes/performance-config.yaml``, at their
largest sizes).

    python benchmarks/bench_volumes.py [--workload SchedulingInTreePVs|SchedulingMigratedInTreePVs|SchedulingCSIPVs|all]
                                       [--nodes N] [--init-pods N] [--pods N]

As upstream writes them:

* 5,000 ``node-default`` nodes; for the migrated and CSI workloads each has a CSINode with
  ``ebs.csi.aws.com`` ``allocatable.count: 39`` (``nodeAllocatableStrategy``), and for the
  migrated one the annotation ``storage.alpha.kubernetes.io/migrated-plugins:
  kubernetes.io/aws-ebs``;
* every pod (``pod-default``, 100m cpu, 500Mi) mounts its own claim (``pvc.yaml``:
  ReadOnlyMany, 1Gi, ``pv.kubernetes.io/bind-completed``) bound to its own PV
  (``pv-aws.yaml``: an in-tree AWS EBS volume; ``pv-csi.yaml``: a CSI volume of
  ``ebs.csi.aws.com``), as ``persistentVolumeTemplatePath`` / ``persistentVolumeClaimTemplatePath``
  create them;
* SchedulingInTreePVs ``5000Nodes_2000Pods``: 1,000 pods running, 2,000 measured (upstream's
  threshold 290 pods/s); the other two ``5000Nodes_5000Pods``: 5,000 running, 5,000 measured
  (threshold 100 pods/s).

The running pods start bound round-robin (one per node, where LeastAllocated would put
them). The figure counts the measured pods only; kubesched's target is 3x upstream's
threshold and at least 1,000 pods/s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    WorkloadResult,
    benchmark_parser,
    bind_round_robin,
    build_snapshot,
    make_nodes,
    make_pods,
    report_run,
    run_workload,
    write_results_json,
)

EBS_CSI = "ebs.csi.aws.com"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"

# name -> ((nodes, init pods, measured pods), upstream's threshold (pods/s), PV source, CSINode limit, migrated)
WORKLOADS: dict[str, tuple[tuple[int, int, int], int, str, bool, bool]] = {
    "SchedulingInTreePVs": ((5000, 1000, 2000), 290, "aws", False, False),
    "SchedulingMigratedInTreePVs": ((5000, 5000, 5000), 100, "aws", True, True),
    "SchedulingCSIPVs": ((5000, 5000, 5000), 100, "csi", True, False),
}


def pv_and_claim(index: int, namespace: str, source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A PV from ``pv-aws.yaml`` / ``pv-csi.yaml`` and the claim of ``pvc.yaml`` bound to it."""
    name = f"pv-{namespace}-{index:06d}"
    volume_id = f"vol-{namespace}-{index:06d}"
    spec: dict[str, Any] = {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"},
                            "persistentVolumeReclaimPolicy": "Retain"}
    if source == "aws":
        spec["awsElasticBlockStore"] = {"volumeID": volume_id}
    else:
        spec["csi"] = {"driver": EBS_CSI, "fsType": "ext4", "volumeHandle": volume_id}
    claim = f"pvc-{index:06d}"
    spec["claimRef"] = {"namespace": namespace, "name": claim}
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec,
          "status": {"phase": "Bound"}}
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": claim, "namespace": namespace, "annotations": {"pv.kubernetes.io/bind-completed": "true"}},
           "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}, "volumeName": name},
           "status": {"phase": "Bound"}}
    return pv, pvc


def with_claim(index: int) -> dict[str, Any]:
    return {"volumes": [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{index:06d}"}}]}


def csi_node(name: str, migrated: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if migrated:
        meta["annotations"] = {MIGRATED_PLUGINS: "kubernetes.io/aws-ebs"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta,
            "spec": {"drivers": [{"name": EBS_CSI, "nodeID": name, "allocatable": {"count": 39}}]}}


def build(name: str, nodes: int, init_pods: int, pods: int):
    _, _, source, limits, migrated = WORKLOADS[name]

    def make():
        node_objs = make_nodes(nodes)
        init = bind_round_robin(make_pods(init_pods, prefix="init-pod-", namespace="namespace-1", spec=with_claim), node_objs)
        pending = make_pods(pods, prefix="pod-", namespace="namespace-2", spec=with_claim)
        snapshot = build_snapshot(node_objs, init, pending)
        storage: dict[str, list[dict[str, Any]]] = {"PersistentVolume": [], "PersistentVolumeClaim": []}
        for namespace, count in (("namespace-1", init_pods), ("namespace-2", pods)):
            for i in range(count):
                pv, pvc = pv_and_claim(i, namespace, source)
                storage["PersistentVolume"].append(pv)
                storage["PersistentVolumeClaim"].append(pvc)
        if limits:
            storage["CSINode"] = [csi_node(n["metadata"]["name"], migrated) for n in node_objs]
        snapshot.objects.update(storage)
        return snapshot

    return make


def main(argv: list[str] | None = None) -> int:
    args = benchmark_parser(__doc__, list(WORKLOADS)).parse_args(argv)
    names = list(WORKLOADS) if args.workload == "all" else [args.workload]
    results: list[WorkloadResult] = []
    failed = False
    for name in names:
        (d_nodes, d_init, d_pods), threshold, *_ = WORKLOADS[name]
        nodes = args.nodes if args.nodes is not None else d_nodes
        init = args.init_pods if args.init_pods is not None else d_init
        pods = args.pods if args.pods is not None else d_pods
        for run in range(args.repeat):
            profiler = None
            if args.profile:
                import cProfile

                profiler = cProfile.Profile()
            result = run_workload(name, build(name, nodes, init, pods), tie_break=args.tie_break, seed=args.seed,
                                  trace_memory=args.trace_memory, profiler=profiler)
            at_size = (nodes, init, pods) == (d_nodes, d_init, d_pods)
            target = max(3 * threshold, 1000)
            report_run(result, args, profiler, f"{args.profile}.{name}.{run}" if args.profile else "", at_size,
                       f"{threshold} pods/s (v1.36.2)", target, "cumulative")
            failed = failed or bool(result.unschedulable)
            results.append(result)
    if args.json:
        write_results_json(args.json, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
