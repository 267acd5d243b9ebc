"""Check (iii): the plugin is what it says it is (name, extension points, methods, events)."""

from __future__ import annotations

import inspect
from typing import Callable, Iterable, Sequence, TypeVar

from ..framework.events import ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from ..framework.interfaces import EnqueueExtensions, Plugin, QueueSortKey, QueueSortPlugin
from ..framework.queued_pod import QueuedPodInfo
from ..framework.registry import PluginSpec
from ..framework.runtime import POINT_METHODS
from ..objects.pod import PodInfo
from ._support import ContractError, ContractReport, build, clusters_or_default, decode
from .clusters import RandomCluster

__all__ = ["METHOD_ARITY", "assert_declarations"]

A = TypeVar("A")

METHOD_ARITY: dict[str, tuple[str, ...]] = {
    "pre_enqueue": ("pod",),
    "less": ("a", "b"),
    "sort_key": ("queued",),
    "pre_filter": ("state", "pod", "snapshot"),
    "add_pod": ("state", "pod_to_schedule", "pod_to_add", "node"),
    "remove_pod": ("state", "pod_to_schedule", "pod_to_remove", "node"),
    "filter": ("state", "pod", "node"),
    "filter_nodes": ("state", "pod", "snapshot", "candidates"),
    "post_filter": ("state", "pod", "filtered"),
    "pre_score": ("state", "pod", "snapshot", "rows"),
    "score": ("state", "pod", "node"),
    "score_nodes": ("state", "pod", "snapshot", "rows"),
    "normalize_score": ("state", "pod", "scores"),
    "reserve": ("state", "pod", "node_name"),
    "unreserve": ("state", "pod", "node_name"),
    "permit": ("state", "pod", "node_name"),
    "pre_bind": ("state", "pod", "node_name"),
    "bind": ("state", "pod", "node_name"),
    "post_bind": ("state", "pod", "node_name"),
    "events_to_register": (),
    "generate_placements": ("state", "pod_group", "parent"),
    "score_placement": ("state", "pod_group", "assignments"),
    "normalize_placement_score": ("state", "pod_group", "scores"),
}
"""The methods of the extension points and the arguments the framework passes them."""

# Methods that only make sense together, and methods that need another to be called at all.
_TOGETHER = (("reserve", "unreserve"), ("add_pod", "remove_pod"))
_NEEDS = {
    "normalize_score": ("score", "score_nodes"),
    "normalize_placement_score": ("score_placement",),
    "sort_key": ("less",),
    "add_pod": ("pre_filter",),
    "remove_pod": ("pre_filter",),
}


def assert_declarations(
    spec: PluginSpec[A],
    args: object = None,
    points: Iterable[str] = (),
    clusters: Sequence[RandomCluster] | None = None,
) -> ContractReport:
    """The plugin's ``name`` is the spec's; it implements every extension point in ``points``
    (the ones your configs enable it at); each extension-point method it has takes the
    framework's arguments, and methods that go together come together (``reserve`` and
    ``unreserve``, ``add_pod`` and ``remove_pod``); a QueueSort ``sort_key`` orders pods as
    its ``less`` does; ``events_to_register`` returns
    ``ClusterEventWithHint`` entries whose hints take ``(pod, old, new)`` and answer a
    ``QueueingHint`` for nodes and pods of the clusters.
    """
    found = clusters_or_default(clusters)
    decoded = decode(spec, args)
    plugin = build(spec, decoded, found[0])
    report = ContractReport(spec.name, ["declarations"], clusters=len(found))
    for point in points:
        methods = POINT_METHODS.get(point)
        if methods is None:
            raise ValueError(f"unknown extension point {point!r}; one of {', '.join(POINT_METHODS)}")
        if not any(callable(getattr(plugin, m, None)) for m in methods):
            raise ContractError(f"plugin {spec.name} claims the {point} extension point but has no "
                                f"{' or '.join(methods)} method")
    present = {m for m in METHOD_ARITY if getattr(plugin, m, None) is not None}
    for method in sorted(present):
        _check_arity(spec.name, plugin, method)
    for group in _TOGETHER:
        have = [m for m in group if m in present]
        if have and len(have) != len(group):
            missing = [m for m in group if m not in present]
            raise ContractError(f"plugin {spec.name} has {' and '.join(have)} but not {' and '.join(missing)}; "
                                f"the framework calls them together")
    for method, needed in _NEEDS.items():
        if method in present and not any(m in present for m in needed):
            raise ContractError(f"plugin {spec.name} has {method} but no {' or '.join(needed)}, so it is never called")
    if isinstance(plugin, QueueSortPlugin) and isinstance(plugin, QueueSortKey):
        _check_sort_key(spec.name, plugin, plugin, found)
    if isinstance(plugin, EnqueueExtensions):
        report.hints_called += _check_events(spec.name, plugin, found)
    elif present & {"pre_enqueue", "pre_filter", "filter", "filter_nodes", "reserve", "permit"}:
        report.notes.append("rejects pods but has no events_to_register: kubesched retries the pods it rejects "
                            "only on the periodic flush of unschedulable pods")
    return report


def _check_arity(name: str, plugin: Plugin, method: str) -> None:
    fn = getattr(plugin, method)
    if not callable(fn):
        raise ContractError(f"plugin {name}: {method} is not callable")
    wanted = METHOD_ARITY[method]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return
    try:
        signature.bind(*wanted)
    except TypeError as err:
        takes = ", ".join(signature.parameters)
        raise ContractError(f"plugin {name}: {method}({takes}) cannot be called as "
                            f"{method}({', '.join(wanted)}): {err}") from err


def _check_sort_key(name: str, less: QueueSortPlugin, key: QueueSortKey, clusters: Sequence[RandomCluster]) -> None:
    """``sort_key`` orders pods exactly as ``less`` does, on pairs of the clusters' pods
    queued at a few timestamps (ties included)."""
    queued = [QueuedPodInfo(pod, timestamp=float(i % 3), seq=i)
              for i, pod in enumerate(p for cluster in clusters[:5] for p in cluster.pods)]
    for a in queued:
        for b in queued:
            if less.less(a, b) != (key.sort_key(a) < key.sort_key(b)):
                raise ContractError(f"plugin {name}: sort_key and less disagree on {a.pod.key} (timestamp "
                                    f"{a.timestamp}) before {b.pod.key} (timestamp {b.timestamp}): less says "
                                    f"{less.less(a, b)}, sort_key says {key.sort_key(a)} < {key.sort_key(b)} is "
                                    f"{key.sort_key(a) < key.sort_key(b)}")


def _check_events(name: str, plugin: EnqueueExtensions, clusters: Sequence[RandomCluster]) -> int:
    try:
        registrations = plugin.events_to_register()
    except Exception as err:
        raise ContractError(f"plugin {name}: events_to_register raised {type(err).__name__}: {err}") from err
    if not isinstance(registrations, list):
        raise ContractError(f"plugin {name}: events_to_register returned a {type(registrations).__name__}, not a list")
    calls = 0
    for i, entry in enumerate(registrations):
        where = f"plugin {name}: events_to_register()[{i}]"
        if not isinstance(entry, ClusterEventWithHint):
            raise ContractError(f"{where} is a {type(entry).__name__}, not a ClusterEventWithHint")
        event = entry.event
        if not isinstance(event, ClusterEvent) or not isinstance(event.resource, str) or not event.resource:
            raise ContractError(f"{where}: event {event!r} is not a ClusterEvent with a resource")
        if not int(event.action):
            raise ContractError(f"{where}: event {event} has no action type")
        if entry.hint is not None:
            if not callable(entry.hint):
                raise ContractError(f"{where}: the hint is not callable")
            calls += _call_hint(where, entry.hint, event, clusters)
    return calls


def _call_hint(where: str, hint: Callable[[PodInfo, object | None, object | None], QueueingHint],
               event: ClusterEvent, clusters: Sequence[RandomCluster]) -> int:
    calls = 0
    for cluster in clusters[:5]:
        nodes = [info.node for info in cluster.snapshot.list()]
        placed = list(cluster.snapshot.pods())
        samples: list[tuple[object | None, object | None]] = []
        if event.resource == EventResource.NODE and nodes:
            samples = [(None, nodes[0]), (nodes[0], nodes[-1]), (nodes[-1], None)]
        elif event.resource in (EventResource.POD, EventResource.UNSCHEDULED_POD) and cluster.pods:
            samples = [(cluster.pods[0], cluster.pods[-1]), (None, cluster.pods[0])]
        elif event.resource == EventResource.ASSIGNED_POD and placed:
            samples = [(None, placed[0]), (placed[0], placed[-1]), (placed[-1], None)]
        for pod in cluster.pods:
            for old, new in samples:
                try:
                    answer = hint(pod, old, new)
                except Exception as err:
                    raise ContractError(f"{where}: the hint raised for pod {pod.key} and {event} "
                                        f"({old!r} -> {new!r}) on {cluster.describe()}: {type(err).__name__}: {err} "
                                        f"(at run time a raising hint counts as QUEUE, but it is a bug)") from err
                if not isinstance(answer, QueueingHint):
                    raise ContractError(f"{where}: the hint answered {answer!r}, not a QueueingHint "
                                        f"(pod {pod.key}, {event}, on {cluster.describe()})")
                calls += 1
    return calls

