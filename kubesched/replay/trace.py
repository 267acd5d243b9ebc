"""A trace to replay: nodes, and pods with their arrival and departure times.

Two formats, told apart by the file name:

* ``.csv``: the Alibaba GPU trace (``alibaba``). Each node becomes a Node with its cpu,
  memory, ``kubesched.io/gpu-milli`` (1000 per GPU) and the label
  ``kubesched.io/gpu-model``; each pod a Pod requesting its cpu, memory and total
  milli-GPU, with its ``gpu_spec`` in the annotation ``kubesched.io/gpu-model``.
* anything else: Kubernetes YAML or JSON, a file or a directory, read by
  ``kubesched.cluster.snapshot.load_snapshot``. Nodes come from the node path, pods
  from the pod path (they may be the same). GPUs as above; a pod arrives at its
  ``metadata.creationTimestamp`` and leaves at its annotation
  ``kubesched.io/deletion-timestamp`` (RFC 3339), if any.

Pods are parsed once per trace and process; a replay copies them as they arrive.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from kubesched.cluster.dump_reader import read_dump
from kubesched.cluster.snapshot import SnapshotError, load_snapshot
from kubesched.objects import PodInfo
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import Node, parse_node
from kubesched.objects.pod import parse_pod, parse_timestamp
from kubesched.plugins.gpushare import GPU_MILLI, GPU_MODEL, GpuRequestError, PodShape, gpu_request

from .alibaba import NodeRow, PodRow, read_nodes, read_pods
from .errors import TraceError, TraceProblem

__all__ = ["DELETION_TIMESTAMP", "NAMESPACE", "ReplayPod", "Trace", "load_trace", "node_object", "pod_object"]

NAMESPACE = "default"
DELETION_TIMESTAMP = "kubesched.io/deletion-timestamp"
"""Pod annotation (RFC 3339): when the pod leaves, in the timeline mode."""
NODE_PODS = "1001"
"""Pods a trace node admits: as in the paper's simulator's node list, never the limit."""


@dataclass(frozen=True, slots=True)
class ReplayPod:
    """A pod of the trace: parsed, with what GPU accounting reads and its times."""

    info: PodInfo
    shape: PodShape
    gpu_milli: int  # total requested
    created: float  # seconds, relative to the trace's first arrival
    deleted: float | None


@dataclass(frozen=True, slots=True)
class Trace:
    nodes: tuple[Node, ...]
    pods: tuple[ReplayPod, ...]
    name: str  # the pod trace's file name, for reports

    @property
    def gpu_capacity_milli(self) -> int:
        return sum(node.allocatable.get(GPU_MILLI) for node in self.nodes)


def load_trace(nodes: str, pods: str, need_times: bool = False) -> Trace:
    """Read (once per process and file version) the nodes and pods of a trace."""
    return _load(nodes, _mtime(nodes), pods, _mtime(pods), need_times)


def _mtime(path: str) -> float:
    try:
        return Path(path).stat().st_mtime
    except OSError:
        return -1.0


@functools.lru_cache(maxsize=4)
def _load(nodes: str, nodes_mtime: float, pods: str, pods_mtime: float, need_times: bool) -> Trace:
    node_list = _csv_nodes(nodes) if _is_csv(nodes) else _kube_nodes(nodes)
    pod_list = _csv_pods(pods, need_times) if _is_csv(pods) else _kube_pods(pods, need_times)
    if not node_list:
        raise TraceError([TraceProblem(nodes, 0, "", "holds no nodes")])
    if not pod_list:
        raise TraceError([TraceProblem(pods, 0, "", "holds no pods")])
    start = min(p.created for p in pod_list)
    if start:
        pod_list = [ReplayPod(p.info, p.shape, p.gpu_milli, p.created - start,
                              None if p.deleted is None else p.deleted - start) for p in pod_list]
    return Trace(tuple(node_list), tuple(pod_list), Path(pods).name)


def _is_csv(path: str) -> bool:
    return Path(path).suffix.lower() == ".csv"


# -- the Alibaba trace -------------------------------------------------------------------
def node_object(row: NodeRow) -> dict[str, Any]:
    """A v1.Node for a trace node."""
    labels = {"kubernetes.io/hostname": row.name}
    if row.model:
        labels[GPU_MODEL] = row.model
    resources = {"cpu": f"{row.cpu_milli}m", "memory": f"{row.memory_mib}Mi", "pods": NODE_PODS,
                 GPU_MILLI: str(row.gpus * 1000)}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": row.name, "labels": labels},
            "status": {"allocatable": resources, "capacity": resources}}


def pod_object(row: PodRow) -> dict[str, Any]:
    """A pending v1.Pod for a trace pod."""
    requests = {"cpu": f"{row.cpu_milli}m", "memory": f"{row.memory_mib}Mi"}
    if row.num_gpu:
        requests[GPU_MILLI] = str(row.num_gpu * row.gpu_milli)
    meta: dict[str, Any] = {"name": row.name, "namespace": NAMESPACE, "uid": row.name}
    if row.gpu_spec:
        meta["annotations"] = {GPU_MODEL: row.gpu_spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "resources": {"requests": requests, "limits": requests}}]}}


def _csv_nodes(path: str) -> list[Node]:
    return [parse_node(node_object(row)) for row in read_nodes(path)]


def _csv_pods(path: str, need_times: bool) -> list[ReplayPod]:
    out = []
    for row in read_pods(path, need_times):
        info = parse_pod(pod_object(row))
        out.append(_replay_pod(info, row.creation_time, row.deletion_time, path, row.name))
    return out


def _replay_pod(info: PodInfo, created: float, deleted: float | None, file: str, where: str) -> ReplayPod:
    try:
        request = gpu_request(info)
    except GpuRequestError as err:
        raise TraceError([TraceProblem(file, 0, where, str(err))]) from None
    shape = PodShape(info.requests.non_zero_milli_cpu, request.milli, request.count, "|".join(sorted(request.models)))
    return ReplayPod(info, shape, request.total, created, deleted)


# -- Kubernetes objects ----------------------------------------------------------------------
def _snapshot_problems(err: SnapshotError) -> TraceError:
    return TraceError([TraceProblem(p.file, 0, " ".join(x for x in (p.obj, p.field) if x), p.message) for p in err.problems])


def _kube_nodes(path: str) -> list[Node]:
    try:
        return list(load_snapshot(path).nodes)
    except SnapshotError as err:
        raise _snapshot_problems(err) from None


def _kube_pods(path: str, need_times: bool = False) -> list[ReplayPod]:
    """The pods of a Kubernetes trace, checked as the CSV trace's are: every problem at
    once, each naming its pod (a departure before the arrival, a bad deletion time, a
    pod without ``metadata.creationTimestamp`` when the timeline mode needs it, a GPU
    request that cannot be placed on devices)."""
    try:
        snapshot = load_snapshot(path)
    except SnapshotError as err:
        raise _snapshot_problems(err) from None
    out: list[ReplayPod] = []
    problems: list[TraceProblem] = []
    bound = _bound_annotations(path) if snapshot.bound_pods else {}
    for pod in [*snapshot.bound_pods, *snapshot.pending_pods]:
        where = f"Pod {pod.key}"
        deleted = None
        annotations = _annotations(pod.raw) if pod.raw is not None else bound.get(pod.key, {})
        try:
            deleted = parse_timestamp(annotations.get(DELETION_TIMESTAMP))
        except ObjectError as err:
            problems.append(TraceProblem(path, 0, f"{where} metadata.annotations[{DELETION_TIMESTAMP}]", err.message))
        created = pod.creation_timestamp
        if created is None and need_times:
            problems.append(TraceProblem(path, 0, f"{where} metadata.creationTimestamp",
                                         "is required: the timeline mode replays pods at their creation time"))
        if created is not None and deleted is not None and deleted < created:
            problems.append(TraceProblem(path, 0, f"{where} metadata.annotations[{DELETION_TIMESTAMP}]",
                                         f"is before metadata.creationTimestamp ({_rfc3339(deleted)} < "
                                         f"{_rfc3339(created)})"))
        info = pod.copy_with(node_name="") if pod.node_name else pod
        try:
            out.append(_replay_pod(info, created or 0.0, deleted, path, where))
        except TraceError as err:
            problems.extend(err.problems)
    if problems:
        raise TraceError(problems)
    return out


def _bound_annotations(path: str) -> dict[str, Mapping[str, Any]]:
    """The annotations of the trace's bound pods (``spec.nodeName`` set), by key: the
    snapshot loader keeps no document of a bound pod, and their departures are annotations."""
    root = Path(path)
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()) \
        if root.is_dir() else [root]
    found: dict[str, Mapping[str, Any]] = {}
    for file in files:
        for item in read_dump(file, []):  # unreadable documents were reported by the loader already
            obj = item.obj
            spec = obj.get("spec")
            if obj.get("kind") == "Pod" and isinstance(spec, Mapping) and spec.get("nodeName"):
                meta = obj.get("metadata")
                meta = meta if isinstance(meta, Mapping) else {}
                found[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = _annotations(obj)
    return found


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _annotations(raw: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = raw.get("metadata") if raw is not None else None
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}
