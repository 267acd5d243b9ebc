"""Running an upstream conformance scenario through kubesched and comparing decisions.

A scenario (``{"nodes", "pods", "queue", "namespaces"}``) is loaded into a
simulation with the default profile, ``percentageOfNodesToScore: 100`` and the
name tie-break; each queued pod's first attempt is recorded in the explain
format and compared field by field with upstream's ``expected`` results.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from .cluster.simulated import Simulation
from .objects.quantity import value as quantity_value
from .cluster.snapshot import snapshot_from_objects
from .framework.config import API_VERSION, KIND, parse_config
from .framework.features import DEFAULT_FEATURES, Features
from .plugins.registry import UPSTREAM_ONLY, in_tree_registry
from .scheduler.explain import attempt_record

__all__ = ["load_case", "run_scenario", "compare", "CONFORMANCE_CONFIG"]

CONFORMANCE_CONFIG = {
    "apiVersion": API_VERSION,
    "kind": KIND,
    "percentageOfNodesToScore": 100,
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}}],
}


# Storage objects of the volume scenarios: scenario key -> kind.
STORAGE_FIELDS = (
    ("persistentVolumes", "PersistentVolume"),
    ("persistentVolumeClaims", "PersistentVolumeClaim"),
    ("storageClasses", "StorageClass"),
    ("csiNodes", "CSINode"),
    ("csiDrivers", "CSIDriver"),
    ("csiStorageCapacities", "CSIStorageCapacity"),
)


# DRA objects of the DRA scenarios: scenario key -> kind.
DRA_FIELDS = (
    ("deviceClasses", "DeviceClass"),
    ("resourceSlices", "ResourceSlice"),
    ("resourceClaimTemplates", "ResourceClaimTemplate"),
    ("resourceClaims", "ResourceClaim"),
)


def load_case(path: str | Path) -> dict[str, Any]:
    with gzip.open(path) as fh:
        return json.load(fh)


def run_scenario(scenario: dict[str, Any], features: Features = DEFAULT_FEATURES) -> list[dict[str, Any]]:
    """First-attempt records of the queued pods, in queue order (``features``: the feature
    gates, v1.36's defaults unless given)."""
    objects = [("scenario", {**n, "kind": "Node"}) for n in scenario.get("nodes", [])]
    objects += [("scenario", {**ns, "kind": "Namespace"}) for ns in scenario.get("namespaces", []) or []]
    objects += [("scenario", {**p, "kind": "Pod"}) for p in scenario.get("pods", [])]
    for key, kind in STORAGE_FIELDS + DRA_FIELDS:
        objects += [("scenario", {**o, "kind": kind}) for o in scenario.get(key, []) or []]
    registry = in_tree_registry(features)
    kinds = frozenset(k for _, k in registry.object_kinds())
    snapshot = snapshot_from_objects(objects, plugin_kinds=kinds)
    queue = []
    for p in scenario.get("queue", []):
        queue.extend(snapshot_from_objects([("scenario", {**p, "kind": "Pod"})], plugin_kinds=kinds).pending_pods)
    snapshot.pending_pods = queue
    config = parse_config(CONFORMANCE_CONFIG, registry, UPSTREAM_ONLY)
    records: dict[str, dict[str, Any]] = {}
    sim_box: list[Simulation] = []

    def on_attempt(attempt: Any) -> None:
        if attempt.attempt == 1 and attempt.pod.key not in records:
            table = sim_box[0].scheduler.cache.table
            records[attempt.pod.key] = attempt_record(attempt, table.order.tolist())

    sim = Simulation(snapshot, config, registry, tie_break="name", on_attempt=on_attempt)
    sim_box.append(sim)
    sim.run()
    out = [records.get(f"{p.namespace}/{p.name}", {"pod": p.key, "missing": True}) for p in queue]
    if any(key in scenario for key, _ in DRA_FIELDS):
        for record in out:
            outcome = sim.outcomes.get(record["pod"])
            placed = record.get("chosen") is not None and outcome is not None and outcome.node == record["chosen"]
            record["allocations"] = pod_allocations(sim, record["pod"]) if placed else None
    return out


def pod_allocations(sim: Simulation, pod_key: str) -> dict[str, Any]:
    """The pod's claims as its binding cycle left them: ``{"<ns>/<claim>": {devices, nodeSelector}}``."""
    pod = next((p for p in sim.snapshot.pending_pods if p.key == pod_key), None)
    store = sim.scheduler.hub.object_stores.find("resource.k8s.io/v1", "ResourceClaim")
    if pod is None or store is None:
        return {}
    names = []
    statuses = dict(pod.resource_claim_statuses)
    for entry in pod.resource_claims:
        name = entry.resource_claim_name or statuses.get(entry.name)
        if name:
            names.append(name)
    extended = sim.cluster.extended_claim_statuses.get(pod.key)
    if extended is not None:
        names.append(str(extended.get("resourceClaimName")))
    out: dict[str, Any] = {}
    for name in names:
        claim = store.get(pod.namespace, name)
        allocation = ((claim or {}).get("status") or {}).get("allocation")
        if not isinstance(allocation, dict):
            continue
        devices = []
        for result in (allocation.get("devices") or {}).get("results") or []:
            device = {k: result[k] for k in ("request", "driver", "pool", "device") if k in result}
            if result.get("adminAccess"):
                device["adminAccess"] = True
            if result.get("consumedCapacity"):
                device["consumedCapacity"] = dict(result["consumedCapacity"])
            devices.append(device)
        entry_out: dict[str, Any] = {"devices": devices}
        if allocation.get("nodeSelector"):
            entry_out["nodeSelector"] = allocation["nodeSelector"]
        out[f"{pod.namespace}/{name}"] = entry_out
    return out


def compare(expected: dict[str, Any], actual: dict[str, Any], ignorable_plugins: frozenset[str] = UPSTREAM_ONLY) -> list[str]:
    """Differences between an expected and an actual record, as readable lines."""
    diffs: list[str] = []
    pod = expected["pod"]
    for key in ("feasible", "best", "chosen", "message"):
        if expected.get(key) != actual.get(key):
            diffs.append(f"{pod}: {key}: expected {expected.get(key)!r}, got {actual.get(key)!r}")
    if (expected.get("preFilter") or None) != (actual.get("preFilter") or None):
        diffs.append(f"{pod}: preFilter: expected {expected.get('preFilter')!r}, got {actual.get('preFilter')!r}")
    exp_f, act_f = expected.get("filtered", {}), actual.get("filtered", {})
    for node in sorted(set(exp_f) | set(act_f)):
        e, a = exp_f.get(node), act_f.get(node)
        if e is None or a is None:
            diffs.append(f"{pod}: filtered[{node}]: expected {e!r}, got {a!r}")
            continue
        if e["plugin"] != a["plugin"] or e["code"] != a["code"] or sorted(e["reasons"]) != sorted(a["reasons"]):
            diffs.append(f"{pod}: filtered[{node}]: expected {e!r}, got {a!r}")
    if "allocations" in expected and _allocations_key(expected.get("allocations")) != _allocations_key(actual.get("allocations")):
        diffs.append(f"{pod}: allocations: expected {expected.get('allocations')!r}, got {actual.get('allocations')!r}")
    exp_s, act_s = expected.get("scores", {}), actual.get("scores", {})
    for node in sorted(set(exp_s) | set(act_s)):
        e, a = dict(exp_s.get(node, {})), dict(act_s.get(node, {}))
        for plugin in list(e):
            if plugin in ignorable_plugins and e[plugin] == 0 and plugin not in a:
                del e[plugin]
        if e != a:
            diffs.append(f"{pod}: scores[{node}]: expected {e!r}, got {a!r}")
    return diffs


def _allocations_key(allocations: dict[str, Any] | None) -> object:
    """Allocations compared as upstream's README says: devices as a multiset, consumed capacity by value."""
    if allocations is None:
        return None
    out = {}
    for claim, entry in allocations.items():
        devices = []
        for d in entry.get("devices", []):
            capacity = tuple(sorted((k, quantity_value(v) if isinstance(v, str) else v)
                                    for k, v in (d.get("consumedCapacity") or {}).items()))
            devices.append((d.get("request"), d.get("driver"), d.get("pool"), d.get("device"),
                            bool(d.get("adminAccess")), capacity))
        out[claim] = (tuple(sorted(devices, key=repr)), repr(entry.get("nodeSelector")))
    return out
