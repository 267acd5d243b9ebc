"""Running the example plugins the way a user does, and reading what comes out.

* ``Cli``: ``kubesched simulate`` in a subprocess, the plugins found through a
  ``kubesched_example_plugins-0.0.0.dist-info`` written beside the sources (as
  ``pip install ./examples/plugins`` would leave it), or through ``--plugin``.
* ``simulate``: the same simulation in this process, for what only the scheduler's
  insides show (waiting pods, cache totals, events).
* Builders for PodGroups, gang members, GPU pods and configs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.cluster.simulated import Simulation, SimulationResult
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.loader import load_plugins
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

from ..helpers import node, pod

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "examples" / "plugins"
SRC = PACKAGE / "src"
DEMO = PACKAGE / "demo"

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
GPU = "nvidia.com/gpu"
COSCHEDULING = "kubesched_examples.coscheduling:spec"
GPU_PACKING = "kubesched_examples.gpu_packing:spec"


# -- objects ------------------------------------------------------------------------
def pod_group(name: str, min_member: int, *, namespace: str = "default", created: str = "2025-01-01T00:00:00Z",
              timeout: int | None = None, min_resources: dict[str, str] | None = None) -> dict:
    spec: dict[str, Any] = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    if min_resources is not None:
        spec["minResources"] = min_resources
    meta = {"name": name, "namespace": namespace, "creationTimestamp": created}
    return {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta, "spec": spec}


def member(name: str, group: str, *, cpu: str = "1", gpu: int = 0, priority: int | None = None,
           created: str | None = None, namespace: str = "default") -> dict:
    """A pod of ``group`` (by its label); its uid is its name."""
    requests: dict[str, Any] = {"cpu": cpu, "memory": "1Gi"}
    if gpu:
        requests[GPU] = str(gpu)
    return pod(name, namespace=namespace, requests=requests, labels={GROUP_LABEL: group}, priority=priority,
               created=created, uid=name)


def plain(name: str, *, cpu: str = "1", gpu: int = 0, created: str | None = None, node_name: str | None = None) -> dict:
    """A pod of no group; its uid is its name."""
    requests: dict[str, Any] = {"cpu": cpu, "memory": "1Gi"}
    if gpu:
        requests[GPU] = str(gpu)
    return pod(name, requests=requests, created=created, uid=name, node_name=node_name)


def gpu_node(name: str, gpus: int, *, cpu: str = "32") -> dict:
    return node(name, cpu=cpu, memory="128Gi", extended={GPU: gpus})


def cpu_node(name: str, cpu: str = "4") -> dict:
    return node(name, cpu=cpu, memory="32Gi")


def config(*, coscheduling: dict | None = None, gpu_packing: bool = False, gpu_packing_only: bool = False,
           with_coscheduling: bool = True) -> dict:
    """A KubeSchedulerConfiguration as scheduler-plugins documents Coscheduling's: on at every
    point it implements (``multiPoint``), PrioritySort off. ``gpu_packing_only``: GPUPacking is
    the only Score plugin, so placements show its scores alone."""
    enabled: list[dict] = [{"name": "Coscheduling"}] if with_coscheduling else []
    plugins: dict[str, Any] = {"multiPoint": {"enabled": enabled, "disabled": [{"name": "PrioritySort"}] if with_coscheduling else []}}
    if gpu_packing_only:
        plugins["score"] = {"disabled": [{"name": "*"}], "enabled": [{"name": "GPUPacking"}]}
    elif gpu_packing:
        enabled.append({"name": "GPUPacking", "weight": 5})
    profile: dict[str, Any] = {"schedulerName": "default-scheduler", "plugins": plugins}
    if coscheduling is not None:
        profile["pluginConfig"] = [{"name": "Coscheduling", "args": coscheduling}]
    return {"apiVersion": API_VERSION, "kind": KIND, "profiles": [profile]}


# -- through the command line ----------------------------------------------------------
def write_dist_info(site: Path) -> Path:
    """What installing the package leaves for ``importlib.metadata``: its METADATA and the entry
    points its pyproject.toml declares."""
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {value}" for name, value in entries.items())
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return dist


@dataclass
class CliRun:
    returncode: int
    stdout: str
    stderr: str
    placements: dict[str, str] = field(default_factory=dict)  # pod -> node, in binding order
    attempts: list[dict] = field(default_factory=list)  # the --explain records

    @property
    def summary(self) -> str:
        return self.stdout.splitlines()[0] if self.stdout else ""

    @property
    def virtual_seconds(self) -> float:
        found = re.search(r"\(\d+ attempt\(s\), ([0-9.e+]+)s virtual time[,)]", self.summary)
        assert found, self.stdout
        return float(found.group(1))

    def unschedulable(self) -> dict[str, str]:
        """Pod -> its last message, from the report's "Unschedulable pods (N), by reason" list:
        a pod alone with its reason is ``  ns/name: reason``; pods sharing one are
        ``  K pods: reason`` followed by ``    ns/a, ns/b, ns/c`` (all named: a group
        shown only by examples, "... and K more", fails here)."""
        lines = self.stdout.splitlines()
        heading = next((i for i, line in enumerate(lines) if re.fullmatch(r"Unschedulable pods \(\d+\), by reason:", line)), None)
        if heading is None:
            return {}
        out: dict[str, str] = {}
        body = lines[heading + 1:]
        i = 0
        while i < len(body) and body[i].startswith("  ") and not body[i].startswith("    "):
            key, _, message = body[i].strip().partition(": ")
            group = re.fullmatch(r"(\d+) pods", key)
            if group is None:
                out[key] = message
                i += 1
                continue
            names = body[i + 1].strip()
            assert " more" not in names, f"not every pod is named: {names}"
            pods = names.split(", ")
            assert len(pods) == int(group.group(1)), body[i:i + 2]
            out.update(dict.fromkeys(pods, message))
            i += 2
        total = int(re.search(r"\((\d+)\)", lines[heading]).group(1))
        assert len(out) == total, self.stdout
        return out

    def requested_cpu(self) -> dict[str, str]:
        """Node -> requested cpu, from the report's per-node table (NODE, POOL, ZONE, CPU as
        ``requested/allocatable share``, MEMORY, PODS, NEW); ``simulate`` runs with
        ``--all-nodes``, so every node is in it."""
        out = {}
        in_nodes = False
        for line in self.stdout.splitlines():
            cells = [c.strip() for c in re.split("[│┃]", line)[1:-1]]
            if cells and cells[0] in ("NODE", "POOL"):
                in_nodes = cells[0] == "NODE"
            elif in_nodes and len(cells) == 7:
                out[cells[0]] = cells[3].split("/")[0]
        return out

    def order(self) -> list[str]:
        """Pods in the order of their attempts."""
        return [a["pod"] for a in self.attempts]


class Cli:
    """``python -m kubesched.cli.main simulate`` with the example plugins importable."""

    def __init__(self, workdir: Path, site: Path | None) -> None:
        self.workdir = workdir
        paths = ([str(site)] if site is not None else []) + [str(SRC), str(ROOT)]
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}

    def simulate(self, objects: list[dict] | Path, cfg: dict | Path | None = None, *args: str) -> CliRun:
        snapshot = objects if isinstance(objects, Path) else self._write("snapshot.yaml", {"apiVersion": "v1", "kind": "List", "items": objects})
        command = [sys.executable, "-m", "kubesched.cli.main", "simulate", str(snapshot), "--tie-break", "name"]
        if cfg is not None:
            command += ["--config", str(cfg if isinstance(cfg, Path) else self._write("config.yaml", cfg))]
        output, explain = self.workdir / "placements.txt", self.workdir / "explain.json"
        output.unlink(missing_ok=True)
        explain.unlink(missing_ok=True)
        command += ["--output", str(output), "--explain", str(explain), "--all-nodes", *args]
        proc = subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=self.workdir, timeout=120, check=False)
        run = CliRun(proc.returncode, proc.stdout, proc.stderr)
        if output.exists():
            run.placements = dict(line.split(" -> ") for line in output.read_text().splitlines())
        if explain.exists():
            run.attempts = [json.loads(line) for line in explain.read_text().splitlines() if line.strip()]
        return run

    def _write(self, name: str, content: dict) -> Path:
        path = self.workdir / name
        path.write_text(yaml.safe_dump(content, sort_keys=False))
        return path


# -- in this process ---------------------------------------------------------------------
@dataclass
class Attempted:
    pod: str
    node: str | None  # the node chosen, None when the attempt failed
    bound_before: int  # pods bound when the attempt started
    at: float  # virtual seconds


@dataclass
class InProcess:
    sim: Simulation
    result: SimulationResult
    attempts: list[Attempted]

    @property
    def placements(self) -> dict[str, str]:
        return {bound.key: node_name for bound, node_name in self.sim.cluster.bindings}

    @property
    def plugin(self) -> Any:
        """The Coscheduling instance of the default profile."""
        return self.sim.scheduler.profiles["default-scheduler"].instances["Coscheduling"]

    def schedule_ready(self, limit: int = 100) -> None:
        """After a change made to the cluster (a pod or PodGroup added or deleted): schedule
        the pods the change made ready, as the live scheduler would. (``Simulation.run``
        counts only bindings as changes: it would call these retries pointless.)"""
        scheduler = self.sim.scheduler
        for _ in range(limit):
            if not scheduler.queue.has_ready():
                return
            scheduler.schedule_one()
            for bound in self.sim.cluster.take_updates():
                scheduler.on_pod_update(None, bound)
        raise AssertionError(f"still scheduling after {limit} attempts")

    def held_cpu(self) -> int:
        """Millicores the cache accounts on all nodes, bound and assumed pods."""
        table = self.sim.scheduler.cache.table
        return int(table.req_cpu[: table.size].sum())


def simulate(objects: list[dict], cfg: dict | None = None, max_attempts: int | None = 1000) -> InProcess:
    """The simulation ``kubesched simulate`` runs, with the plugins loaded as ``--plugin`` does;
    ``max_attempts`` bounds a run that would not settle."""
    registry = load_plugins(in_tree_registry(), [COSCHEDULING, GPU_PACKING], use_entry_points=False)
    parsed = parse_config(cfg if cfg is not None else config(), registry, UPSTREAM_ONLY)
    kinds = frozenset(kind for _, kind in registry.object_kinds())
    snapshot = snapshot_from_objects([("test", obj) for obj in objects], plugin_kinds=kinds)
    attempts: list[Attempted] = []
    holder: list[Simulation] = []

    def record(attempt: Any) -> None:
        sim = holder[0]
        chosen = attempt.result.suggested_host if attempt.result is not None else None
        attempts.append(Attempted(attempt.pod.key, chosen, len(sim.cluster.bindings), attempt.started))

    sim = Simulation(snapshot, parsed, registry, tie_break="name", on_attempt=record)
    holder.append(sim)
    return InProcess(sim, sim.run(max_attempts=max_attempts), attempts)
