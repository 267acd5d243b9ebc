"""``/metrics/resources``: kube-scheduler's stable ``kube_pod_resource_request`` and
``kube_pod_resource_limit`` (pkg/scheduler/metrics/resources).

One gauge sample per pod and resource the pod requests (or limits), labelled
``namespace, pod, node, scheduler, priority, resource, unit``: the unit is ``cores`` for
cpu, ``bytes`` for memory, storage, ephemeral storage and hugepages, ``integer`` for
attachable volumes and empty otherwise; zero amounts and terminal pods are left out;
``node`` is empty for a pending pod. Requests are the pod's effective requests (init
containers, overhead and pod-level resources as the scheduler counts them); limits are
read from the pod's document when it is seen (``limits_of``), as ``PodLimits`` sums them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ...objects.pod import PodInfo
from ...objects.quantity import milli_value, value
from ...objects.resources import Resource

__all__ = ["PodResourcesCollector", "limit_parts", "limits_of", "resources_exposition"]

_LABELS = ["namespace", "pod", "node", "scheduler", "priority", "resource", "unit"]
_REQUEST_HELP = ("[STABLE] Resources requested by workloads on the cluster, broken down by pod. This shows the "
                 "resource usage the scheduler and kubelet expect per pod for resources along with the unit for "
                 "the resource if any.")
_LIMIT_HELP = ("[STABLE] Resources limit for workloads on the cluster, broken down by pod. This shows the resource "
               "usage the scheduler and kubelet expect per pod for resources along with the unit for the resource "
               "if any.")

#: A pod and the limits seen in its document (resource -> amount in the unit's base: cores, bytes, count).
PodWithLimits = tuple[PodInfo, Mapping[str, float]]


def _unit(resource: str) -> str:
    if resource == "cpu":
        return "cores"
    if resource in ("memory", "storage", "ephemeral-storage") or resource.startswith("hugepages-"):
        return "bytes"
    if resource.startswith("attachable-volumes-"):
        return "integer"
    return ""


def _amount(resource: str, quantity: object) -> float:
    text = quantity if isinstance(quantity, (str, int, float)) else str(quantity)
    return milli_value(text) / 1000 if resource == "cpu" else float(value(text))


def limit_parts(raw: Mapping[str, object]) -> dict[str, object] | None:
    """The parts of a pod document ``limits_of`` reads, as a small spec holding only the
    containers' limits and the overhead; None when no container sets a limit. A few dict
    reads, no parsing: the amounts are parsed when /metrics/resources is scraped."""
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return None
    parts: dict[str, object] = {}
    found = False
    for key in ("containers", "initContainers"):
        kept = []
        for container in spec.get(key) or ():
            resources = container.get("resources") if isinstance(container, dict) else None
            limits = resources.get("limits") if isinstance(resources, dict) else None
            if limits:
                kept.append({"resources": {"limits": limits}})
                found = True
        parts[key] = kept
    if not found:
        return None
    if spec.get("overhead"):
        parts["overhead"] = spec["overhead"]
    return {"spec": parts}


def limits_of(raw: Mapping[str, object]) -> dict[str, float]:
    """``PodLimits`` of a pod document: the containers' limits summed, each at least the
    largest init container's, plus the overhead of every resource limited."""
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        return {}
    total: dict[str, float] = {}
    for container in spec.get("containers") or ():
        limits = ((container.get("resources") or {}).get("limits") or {}) if isinstance(container, dict) else {}
        for name, quantity in limits.items():
            total[name] = total.get(name, 0.0) + _amount(name, quantity)
    for container in spec.get("initContainers") or ():
        limits = ((container.get("resources") or {}).get("limits") or {}) if isinstance(container, dict) else {}
        for name, quantity in limits.items():
            total[name] = max(total.get(name, 0.0), _amount(name, quantity))
    for name, quantity in (spec.get("overhead") or {}).items():
        if name in total:
            total[name] += _amount(name, quantity)
    return {name: amount for name, amount in total.items() if amount}


def _requests(resource: Resource) -> Iterable[tuple[str, float]]:
    yield "cpu", resource.milli_cpu / 1000
    yield "memory", float(resource.memory)
    yield "ephemeral-storage", float(resource.ephemeral_storage)
    yield from ((name, float(amount)) for name, amount in resource.scalar.items())


class PodResourcesCollector(Collector):
    """The two families, read from the scheduler's pods at scrape time."""

    def __init__(self, pods: Callable[[], Iterable[PodWithLimits]]) -> None:
        self._pods = pods

    def describe(self) -> Iterable[Metric]:
        return [GaugeMetricFamily("kube_pod_resource_request", _REQUEST_HELP, labels=_LABELS),
                GaugeMetricFamily("kube_pod_resource_limit", _LIMIT_HELP, labels=_LABELS)]

    def collect(self) -> Iterable[Metric]:
        requests = GaugeMetricFamily("kube_pod_resource_request", _REQUEST_HELP, labels=_LABELS)
        limits = GaugeMetricFamily("kube_pod_resource_limit", _LIMIT_HELP, labels=_LABELS)
        for pod, pod_limits in self._pods():
            base = [pod.namespace, pod.name, pod.node_name, pod.scheduler_name, str(pod.priority)]
            for name, amount in _requests(pod.requests.requests):
                if amount:
                    requests.add_metric([*base, name, _unit(name)], amount)
            for name, amount in pod_limits.items():
                limits.add_metric([*base, name, _unit(name)], amount)
        return [requests, limits]


def resources_exposition(pods: Callable[[], Iterable[PodWithLimits]]) -> Callable[[], bytes]:
    """The text exposition of ``/metrics/resources`` (its own registry, as upstream's handler)."""
    registry = CollectorRegistry(auto_describe=True)
    registry.register(PodResourcesCollector(pods))
    return lambda: prometheus_client.generate_latest(registry)
