"""The live benchmark: `kubesched run` against the test API server, each in its own process.

The API server is served over TLS (kubesched verifies it against the test CA through
its kubeconfig, as against a real cluster) and the objects are real-shaped: nodes carry
the status a kubelet writes (conditions, addresses, images, nodeInfo), pods the
defaults the API server adds, and both ``managedFields`` (the test server writes them).

Workloads (nodes from upstream scheduler_perf's ``node-default.yaml``, pods from
``pod-default.yaml``, as ``common.py`` builds them, plus ``--unschedulable`` pods that
fit no node):

* ``backlog``: nodes and all measured pods are in the API server before the scheduler
  starts; measured from the scheduler's informers synced (``/readyz``) to the last pod
  bound.
* ``stream``: the scheduler is up first; pods are created through the API at a steady
  rate (``--rate``) and each pod's create->bound latency is taken from a watch.
* ``sync``: no pending pods; the time from start to ``/readyz`` (informers synced) with
  many bound pods (default 5,000 nodes, 150,000 bound pods), and the RSS after it.

For each it prints pods/s, create->bound latency p50/p99, the scheduler process's CPU
seconds per scheduled pod (its own rusage, whole process and after sync), its peak RSS,
the events written per pod (``Scheduled`` and ``FailedScheduling``, read back from the
API server once the writer is idle: upstream writes one per pod, 1.00), the scheduling
attempts per unschedulable pod (``scheduler_schedule_attempts_total``; upstream makes
one when nothing changes), and (with ``--profile-share``, a second run under cProfile timed
by the process's CPU clock, functions of the main thread) the share of its CPU spent in the
API client and JSON, and its top functions (``BENCH_LIVE_PROFILE_OUT=FILE`` keeps the profile).

Issue 26's columns: the Scheduled events' lag behind their pod's binding (p50/p99/max, as
seen by the benchmark's watches), how many of them were written while pods were still
being bound (``during binding``) and when the last one was (beside the last bind: writing
events as binds go takes some of the API server from the binds, and the test server is on
the same two cores), and the events lost at exit (bound pods without a
Scheduled event once the scheduler has stopped). ``--latency MS`` puts a proxy that adds
MS milliseconds to every round trip (``latency_proxy.py``, its own process) between the
scheduler and the API server; several values run one case each. ``--before REV`` runs
every case a second time with the scheduler of commit REV (``git archive``), its line
printed beside the working tree's. ``--interrupt term|kill`` stops the scheduler with
that signal once ``--interrupt-at`` of the pods are bound and counts the bound pods that
kept their Scheduled event.

Differences from upstream's scheduler_perf: the API server is kubesched's test server
(Python, in memory, no etcd, no admission), so absolute rates are bounded by it; the
scheduler's own CPU per pod is the figure to compare. Upstream's kube-scheduler v1.36.2
spent about 1.7 ms (500 nodes) and 3.3 ms (5,000 nodes) of CPU per scheduled pod on
this machine against a real kube-apiserver (the issue's measurement, context only).

Usage::

    python benchmarks/bench_live.py                          # backlog + stream at both sizes, then sync
    python benchmarks/bench_live.py --mode backlog --nodes 500 --pods 2000
    python benchmarks/bench_live.py --mode sync --nodes 5000 --bound 150000
    python benchmarks/bench_live.py --profile-share          # adds the client/JSON CPU share
    python benchmarks/bench_live.py --plain-http             # as before TLS and real-shaped objects
    python benchmarks/bench_live.py --mode backlog --nodes 500 --pods 2000 --latency 5 50 200 --before HEAD~3
    python benchmarks/bench_live.py --mode backlog --nodes 500 --pods 2000 --interrupt kill
    BENCH_LIVE_LOG_DIR=D python benchmarks/bench_live.py     # keeps each case's scheduler log in D
    BENCH_LIVE_PYSPY_OUT=F python benchmarks/bench_live.py   # also a py-spy sampling profile (folded stacks) in F; needs `pip install py-spy`
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.apiserver (the test CA)
from common import bind_round_robin, make_nodes, make_pods  # noqa: E402

from kubesched.cluster.kube.client import ApiClient  # noqa: E402
from kubesched.cluster.kube.connection import load_connection  # noqa: E402
from tests.apiserver.tls import ca_data  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM_CPU_MS = {500: 1.7, 5000: 3.3}  # kube-scheduler v1.36.2, per scheduled pod, with a real API server


@dataclass
class Result:
    mode: str
    nodes: int
    pods: int
    seconds: float = 0.0
    cpu_total: float = 0.0
    cpu_after_sync: float = 0.0
    sync_seconds: float = 0.0
    peak_rss_mib: float = 0.0
    latencies: list[float] = field(default_factory=list)
    bound: int = 0
    client_share: float | None = None
    cpu_to_sync: float = 0.0
    bound_in_cluster: int = 0
    shares: dict[str, float] = field(default_factory=dict)
    unschedulable: int = 0
    events_written: int = 0
    unschedulable_attempts: float = 0.0
    errors: float = 0.0  # attempts ended by an error (a refused or timed-out bind): each wakes waiting pods
    latency_ms: float = 0.0  # added to each round trip by the proxy
    tree: str = ""  # "" the working tree, else the commit the scheduler ran from
    event_lags: list[float] = field(default_factory=list)  # Scheduled event seen - its pod seen bound
    events_during_binding: int = 0  # Scheduled events seen before the last pod was bound
    last_event: float = 0.0  # seconds from the start to the last Scheduled event seen
    lost_at_exit: int = 0  # bound pods without a Scheduled event once the scheduler stopped
    interrupted: str = ""  # the signal that stopped the scheduler mid-burst, if any

    def line(self) -> str:
        if self.mode == "sync":
            return (f"sync     {self.nodes:6d} nodes, {self.bound_in_cluster} bound pods: informers synced in "
                    f"{self.sync_seconds:.1f} s (scheduler CPU to sync {self.cpu_to_sync:.1f} s), peak RSS "
                    f"{self.peak_rss_mib:.0f} MiB")
        rate = self.bound / self.seconds if self.seconds else 0.0
        lat = sorted(self.latencies)
        p50 = lat[len(lat) // 2] * 1000 if lat else float("nan")
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else float("nan")
        per_pod = self.cpu_after_sync / self.bound * 1000 if self.bound else float("nan")
        per_pod_all = self.cpu_total / self.bound * 1000 if self.bound else float("nan")
        upstream = UPSTREAM_CPU_MS.get(self.nodes)
        context = f" (upstream kube-scheduler ~{upstream} ms/pod with a real API server: context, not a ratio)" if upstream else ""
        share = f", API client+JSON {self.client_share:.0%} of CPU" if self.client_share is not None else ""
        all_pods = self.pods + self.unschedulable
        events = self.events_written / all_pods if all_pods else float("nan")
        attempts = self.unschedulable_attempts / self.unschedulable if self.unschedulable else float("nan")
        lags = sorted(self.event_lags)
        lag = (f"event lag p50 {lags[len(lags) // 2] * 1000:.0f} ms p99 "
               f"{lags[min(len(lags) - 1, int(len(lags) * 0.99))] * 1000:.0f} ms max {lags[-1] * 1000:.0f} ms, "
               if lags else "event lag n/a, ")
        where = (f"[{self.tree or 'this tree'}{f', +{self.latency_ms:g} ms RTT' if self.latency_ms else ''}] ")
        if self.interrupted:
            return (f"{where}{self.mode:8s} {self.nodes:6d} nodes: {self.interrupted} at {self.bound} pods bound: "
                    f"{self.bound - self.lost_at_exit} of them have their Scheduled event, "
                    f"events lost at exit {self.lost_at_exit}")
        return (f"{where}{self.mode:8s} {self.nodes:6d} nodes {self.bound:7d}/{self.pods} pods: {rate:8.0f} pods/s, "
                f"latency p50 {p50:.0f} ms p99 {p99:.0f} ms, CPU {per_pod:.2f} ms/pod after sync "
                f"({per_pod_all:.2f} ms/pod whole process), sync {self.sync_seconds:.1f} s "
                f"({self.cpu_to_sync:.2f} s CPU from start to synced), "
                f"peak RSS {self.peak_rss_mib:.0f} MiB, events/pod {events:.2f}, "
                f"attempts/unschedulable pod {attempts:.2f}, error attempts {self.errors:.0f}, {lag}"
                f"Scheduled events written during binding {self.events_during_binding}, last one at "
                f"{self.last_event:.1f} s (the last bind at {self.seconds:.1f} s), "
                f"events lost at exit {self.lost_at_exit}{share}{context}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


# Bytecode as an installed package has it (pip compiles on install; the image's wheels too):
# compiled once into a cache of the benchmark's own, so no process pays for compiling the
# sources at start (a machine with PYTHONDONTWRITEBYTECODE set would, on every start).
PYC_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "kubesched-bench-pycache")}


def warm_bytecode() -> None:
    """Compile what `kubesched run` and the test server import, once."""
    subprocess.run([sys.executable, "-c", "import kubesched.cli.run, tests.apiserver.server"], cwd=ROOT, env=PYC_ENV,
                   check=True)


def real_shaped_node(node: dict[str, Any], index: int) -> dict[str, Any]:
    """A node as a kubelet reports it: the well-known labels, allocatable, five conditions
    with heartbeats, addresses, daemon endpoints, nodeInfo and a dozen images."""
    name = node["metadata"]["name"]
    status = node.setdefault("status", {})
    capacity = {**status.get("capacity", {}), "ephemeral-storage": "102Gi", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    status["capacity"] = capacity
    status["allocatable"] = {**capacity, "ephemeral-storage": "94Gi"}
    beat = "2026-11-26T06:00:00Z"
    status["conditions"] = [
        {"type": kind, "status": "False", "lastHeartbeatTime": beat, "lastTransitionTime": beat, "reason": reason,
         "message": message}
        for kind, reason, message in (("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory "
                                        "available"), ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk "
                                        "pressure"), ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient "
                                        "PID available"))
    ] + [{"type": "Ready", "status": "True", "lastHeartbeatTime": beat, "lastTransitionTime": beat,
          "reason": "KubeletReady", "message": "kubelet is posting ready status"}]
    status["addresses"] = [{"type": "InternalIP", "address": f"10.{index // 65536 % 256}.{index // 256 % 256}."
                            f"{index % 256}"}, {"type": "Hostname", "address": name}]
    status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
    status["nodeInfo"] = {"machineID": f"{index:032x}", "systemUUID": f"{index:08x}-0000-0000-0000-000000000000",
                          "bootID": f"{index:08x}-1111-2222-3333-444444444444", "kernelVersion": "6.8.0-49-generic",
                          "osImage": "Ubuntu 24.04.1 LTS", "containerRuntimeVersion": "containerd://2.0.1",
                          "kubeletVersion": "v1.36.2", "operatingSystem": "linux", "architecture": "amd64"}
    status["images"] = [{"names": [f"registry.k8s.io/image-{i}@sha256:{i:064x}", f"registry.k8s.io/image-{i}:v1.{i}"],
                         "sizeBytes": 10_000_000 + i * 1_000_003} for i in range(12)]
    node["metadata"].setdefault("labels", {}).update({
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux"})
    node["metadata"].setdefault("annotations", {}).update({
        "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"})
    return node


def unschedulable_pods(count: int) -> list[dict[str, Any]]:
    """Pods asking more CPU than any node has: each fits nowhere, for good."""
    pods = make_pods(count, prefix="huge-")
    for pod in pods:
        for container in pod["spec"]["containers"]:
            container["resources"] = {"requests": {"cpu": "64", "memory": "500Mi"},
                                      "limits": {"cpu": "64", "memory": "500Mi"}}
    return pods


class APIServerProcess:
    def __init__(self, objects: list[dict[str, Any]], workdir: Path, tls: bool = True) -> None:
        load = workdir / "load.json"
        load.write_bytes(orjson.dumps(objects))
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.apiserver", "--port", "0", "--load", str(load),
                                      *(["--tls"] if tls else [])], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                     env=PYC_ENV)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("READY "):
                self.url = line.split()[1]
                break
        else:
            raise RuntimeError("the test API server did not start")
        self.tls = tls
        self.kubeconfig = self.kubeconfig_for(self.url, workdir / "kubeconfig")

    def kubeconfig_for(self, url: str, path: Path) -> str:
        """A kubeconfig for this server reached at ``url`` (itself, or a proxy in front of it)."""
        authority = f"    certificate-authority-data: {ca_data()}\n" if self.tls else ""
        path.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: " + url + "\n"
            + authority + "users:\n- name: bench\n  user:\n    token: bench\ncontexts:\n- name: bench\n  context:\n"
            "    cluster: bench\n    user: bench\ncurrent-context: bench\n")
        return str(path)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)  # a large store takes a while to tear down
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


class ProxyProcess:
    """``latency_proxy.py`` in front of the API server: ``url`` is the scheduler's server."""

    def __init__(self, target_url: str, latency_ms: float, reset_every: int) -> None:
        scheme, _, address = target_url.partition("://")
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "latency_proxy.py"), "--target",
                                      address, "--latency", str(latency_ms), "--reset-every", str(reset_every)],
                                     cwd=ROOT, stdout=subprocess.PIPE, text=True, env=PYC_ENV)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            raise RuntimeError("the latency proxy did not start")
        self.url = f"{scheme}://{line.split()[1]}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# ``kubesched run`` under cProfile timed by the process's CPU clock (``python -m cProfile``
# times the wall clock, which counts the event loop's idle waits and time the machine gave
# to other processes). The profile is written when the process exits (SIGTERM included).
PROFILED_MAIN = """
import cProfile, runpy, sys, time
out = sys.argv[1]
sys.argv = ["kubesched", *sys.argv[2:]]
profiler = cProfile.Profile(time.process_time)
profiler.enable()
try:
    runpy.run_module("kubesched.cli.main", run_name="__main__")
except SystemExit:
    pass
finally:
    profiler.disable()
    profiler.dump_stats(out)
"""


class SchedulerProcess:
    def __init__(self, kubeconfig: str, workdir: Path, profile: bool, tree: Path = ROOT) -> None:
        self.port = _free_port()
        self.profile_file = workdir / "scheduler.prof"
        args = ["run", "--kubeconfig", kubeconfig, "--leader-elect=false", "--port", str(self.port),
                "--bind-address", "127.0.0.1", "--kube-api-qps", "100000", "--kube-api-burst", "100000"]
        command = [sys.executable, "-c", PROFILED_MAIN, str(self.profile_file)] if profile else \
            [sys.executable, "-m", "kubesched.cli.main"]
        if sampled := os.environ.get("BENCH_LIVE_PYSPY_OUT"):
            # A sampling profile (py-spy, raw folded stacks of busy threads): unlike cProfile it
            # does not inflate code that makes many small calls.
            command = ["py-spy", "record", "--format", "raw", "--rate", "500", "--output", sampled,
                       "--", *command]
        self.started = time.monotonic()
        # From ``tree``'s directory, ``python -m`` imports that tree's kubesched (another commit's, for --before).
        self.log_file = workdir / "scheduler.log"
        self.proc = subprocess.Popen([*command, *args], cwd=tree, env=PYC_ENV, stderr=open(self.log_file, "w"))
        self.ps = psutil.Process(self.proc.pid)
        while sampled and not self.ps.children():  # the figures are the scheduler's, not py-spy's
            if self.proc.poll() is not None:
                raise RuntimeError(f"py-spy exited with {self.proc.returncode} before starting kubesched run")
            time.sleep(0.01)
        if sampled:
            self.ps = self.ps.children()[0]

    def cpu(self) -> float:
        t = self.ps.cpu_times()
        return t.user + t.system

    def metrics(self, *line_starts: str) -> list[float]:
        """One scrape of /metrics: the value of the first line starting with each (0 if none).
        Only the families named are asked for (``name[]``): a whole exposition costs the
        scheduler tens of milliseconds of CPU, which the once-a-second scrapes would add."""
        query = urllib.parse.urlencode([("name[]", start.split("{", 1)[0]) for start in line_starts])
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics?{query}", timeout=30) as r:
            lines = r.read().decode().splitlines()
        return [next((float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith(start)), 0.0)
                for start in line_starts]

    def metric(self, line_start: str) -> float:
        return self.metrics(line_start)[0]

    def wait_events_idle(self, timeout: float = 600.0) -> None:
        """Until the event writer has nothing queued and its written count held still for a
        second (one scrape a second, of those two series only)."""
        deadline, last = time.monotonic() + timeout, -1.0
        while time.monotonic() < deadline:
            time.sleep(1.0)
            written, queued = self.metrics("kubesched_events_written_total", "kubesched_events_queued")
            if queued == 0 and written == last:
                return
            last = written

    def wait_ready(self, timeout: float = 600.0) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kubesched run exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        return time.monotonic()
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("kubesched run did not become ready")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> tuple[float, float]:
        cpu, rss = self.cpu(), _peak_rss_mib(self.ps.pid)
        self.ps.send_signal(sig)
        self.proc.wait(60)  # the events' grace period included
        return cpu, rss


class BindWatch:
    """Watches pods in the benchmark's own process and notes when each becomes bound."""

    def __init__(self, url_kubeconfig: str, expected: int) -> None:
        self.kubeconfig = url_kubeconfig
        self.expected = expected
        self.bound: dict[str, float] = {}
        self.created: dict[str, float] = {}
        self.scheduled_events: dict[str, float] = {}  # pod name -> when its Scheduled event was seen
        self.done = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready = threading.Event()
        self._events_ready = threading.Event()
        asyncio.run_coroutine_threadsafe(self._watch(), self._loop)
        asyncio.run_coroutine_threadsafe(self._watch_events(), self._loop)
        self._ready.wait(30)
        self._events_ready.wait(30)

    async def _watch_events(self) -> None:
        """Notes when each pod's Scheduled event appears (until the process ends)."""
        conn = load_connection(self.kubeconfig, qps=1e6, burst=1_000_000)
        path = "/apis/events.k8s.io/v1/events"
        async with ApiClient(conn) as api:
            listing = await api.request("GET", path, params={"limit": "1"})
            rv = listing["metadata"]["resourceVersion"]
            self._events_ready.set()
            while True:
                async for event in api.watch(path, {"resourceVersion": rv, "allowWatchBookmarks": "true"}):
                    obj = event.object
                    rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                    if event.type == "ADDED" and obj.get("reason") == "Scheduled":
                        name = (obj.get("regarding") or {}).get("name")
                        if name:
                            self.scheduled_events.setdefault(name, time.monotonic())

    async def _watch(self) -> None:
        conn = load_connection(self.kubeconfig, qps=1e6, burst=1_000_000)
        async with ApiClient(conn) as api:
            listing = await api.request("GET", "/api/v1/pods", params={"limit": "1"})
            rv = listing["metadata"]["resourceVersion"]
            self._ready.set()
            while len(self.bound) < self.expected:
                async for event in api.watch("/api/v1/pods", {"resourceVersion": rv, "allowWatchBookmarks": "true"}):
                    meta = event.object.get("metadata") or {}
                    rv = meta.get("resourceVersion", rv)
                    if event.type in ("ADDED", "MODIFIED") and (event.object.get("spec") or {}).get("nodeName"):
                        self.bound.setdefault(meta["name"], time.monotonic())
                        if len(self.bound) >= self.expected:
                            break
        self.done.set()

    def create(self, pods: list[dict[str, Any]], rate: float) -> None:
        asyncio.run_coroutine_threadsafe(self._create(pods, rate), self._loop).result()

    async def _create(self, pods: list[dict[str, Any]], rate: float) -> None:
        conn = load_connection(self.kubeconfig, qps=1e6, burst=1_000_000)
        async with ApiClient(conn) as api:
            start = time.monotonic()
            pending: set[asyncio.Task[Any]] = set()
            for i, pod in enumerate(pods):
                due = start + i / rate
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                self.created[pod["metadata"]["name"]] = time.monotonic()
                task = asyncio.create_task(api.request("POST", "/api/v1/namespaces/default/pods", body=pod,
                                                       timeout=600.0))  # a loaded server answers late
                pending.add(task)
                task.add_done_callback(pending.discard)
            await asyncio.gather(*pending)


def _client_share(profile_file: Path) -> tuple[float, dict[str, float]]:
    stats = pstats.Stats(str(profile_file))
    groups = {"API client + JSON": ("aiohttp", "yarl", "multidict", "orjson", "kube/client.py", "kube/watch.py",
                                    "kube/ratelimit.py", "json/"),
              "informers": ("kube/reflector.py", "kube/informer.py"),
              "event loop + sockets": ("asyncio", "selectors", "socket", "ssl"),
              "scheduling core": ("kubesched/scheduler", "kubesched/framework", "kubesched/plugins", "kubesched/cache",
                                  "kubesched/queue", "kubesched/objects")}
    totals = {g: 0.0 for g in groups}
    overall = 0.0
    for (file, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        overall += tottime
        for group, needles in groups.items():
            if any(n in file for n in needles):
                totals[group] += tottime
                break
    shares = {g: t / overall for g, t in totals.items()} if overall else {}
    if overall:
        shares["other"] = max(0.0, 1.0 - sum(shares.values()))
        top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:12]  # type: ignore[attr-defined]
        print("    top functions by own time (cProfile):")
        for (file, line, func), (_, calls, tottime, _, _) in top:
            print(f"      {tottime / overall:5.1%} {calls:8d} calls  {func} ({Path(file).name}:{line})")
    return shares.get("API client + JSON", 0.0), shares


def _events_written(kubeconfig: str) -> int:
    """Scheduled and FailedScheduling events in the API server (a series counts once: one object)."""
    async def count() -> int:
        async with ApiClient(load_connection(kubeconfig, qps=1e6, burst=1_000_000)) as api:
            listing = await api.request("GET", "/apis/events.k8s.io/v1/events")
            items = listing.get("items") or []
            assert isinstance(items, list)
            return sum(1 for e in items if e.get("reason") in ("Scheduled", "FailedScheduling"))
    return asyncio.run(count())


def _scheduled_without_event(kubeconfig: str) -> tuple[int, int]:
    """Pods bound in the API server, and how many of them have no Scheduled event."""
    async def count() -> tuple[int, int]:
        async with ApiClient(load_connection(kubeconfig, qps=1e6, burst=1_000_000)) as api:
            pods = (await api.request("GET", "/api/v1/pods")).get("items") or []
            events = (await api.request("GET", "/apis/events.k8s.io/v1/events")).get("items") or []
            assert isinstance(pods, list) and isinstance(events, list)
            bound = {p["metadata"]["name"] for p in pods if (p.get("spec") or {}).get("nodeName")
                     and p["metadata"]["name"].startswith("pod-")}
            told = {(e.get("regarding") or {}).get("name") for e in events if e.get("reason") == "Scheduled"}
            return len(bound), len(bound - told)
    return asyncio.run(count())


@dataclass
class Setup:
    """How a case reaches the API server and which scheduler runs."""

    latency_ms: float = 0.0
    reset_every: int = 0
    tree: Path = ROOT
    tree_label: str = ""
    interrupt: str = ""  # "term" or "kill": stop the scheduler mid-burst
    interrupt_at: float = 0.5


def run_case(mode: str, nodes: int, pods: int, bound: int, rate: float, profile: bool, unschedulable: int = 0,
             real: bool = True, setup: Setup | None = None) -> Result:
    node_objs = make_nodes(nodes)
    if real:
        node_objs = [real_shaped_node(n, i) for i, n in enumerate(node_objs)]
    bound_pods = bind_round_robin(make_pods(bound, prefix="bound-"), node_objs) if bound else []
    measured = make_pods(pods, prefix="pod-") if mode != "sync" else []
    stuck = unschedulable_pods(unschedulable) if mode != "sync" else []
    preload = [*node_objs, *bound_pods, *([*measured, *stuck] if mode == "backlog" else [])]
    setup = setup or Setup()
    result = Result(mode, nodes, len(measured), unschedulable=len(stuck), latency_ms=setup.latency_ms,
                    tree=setup.tree_label)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = APIServerProcess(preload, work, tls=real)
        proxy = ProxyProcess(server.url, setup.latency_ms, setup.reset_every) \
            if setup.latency_ms or setup.reset_every else None
        sched_kubeconfig = server.kubeconfig_for(proxy.url, work / "proxied") if proxy else server.kubeconfig
        watch = BindWatch(server.kubeconfig, len(measured)) if measured else None
        sched = SchedulerProcess(sched_kubeconfig, work, profile, tree=setup.tree)
        try:
            ready = sched.wait_ready()
            result.sync_seconds = ready - sched.started
            cpu_at_sync = sched.cpu()
            result.cpu_to_sync = cpu_at_sync
            result.bound_in_cluster = bound
            start = ready
            if mode == "stream":
                assert watch is not None
                start = time.monotonic()
                watch.create([*measured[: len(measured) // 2], *stuck, *measured[len(measured) // 2:]], rate)
            if watch is not None and setup.interrupt:
                wanted = max(1, int(len(measured) * setup.interrupt_at))
                deadline = time.monotonic() + 600
                while len(watch.bound) < wanted and time.monotonic() < deadline:
                    time.sleep(0.005)
                sig = signal.SIGKILL if setup.interrupt == "kill" else signal.SIGTERM
                sched.stop(sig)
                result.interrupted = sig.name
                result.bound, result.lost_at_exit = _scheduled_without_event(server.kubeconfig)
                return result
            if watch is not None:
                watch.done.wait(600)
                end = max(watch.bound.values()) if watch.bound else time.monotonic()
                result.seconds = end - start
                result.bound = len(watch.bound)
                if mode == "stream":
                    result.latencies = [watch.bound[n] - watch.created[n] for n in watch.bound if n in watch.created]
                else:
                    result.latencies = [t - ready for t in watch.bound.values()]
            if measured:
                sched.wait_events_idle()  # the CPU below includes writing every event
                result.unschedulable_attempts, result.errors = sched.metrics(
                    'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"}',
                    'scheduler_schedule_attempts_total{profile="default-scheduler",result="error"}')
            cpu_end, rss = sched.stop()
            if watch is not None:
                last_bound = max(watch.bound.values()) if watch.bound else 0.0
                seen = dict(watch.scheduled_events)
                result.event_lags = [seen[n] - t for n, t in watch.bound.items() if n in seen]
                result.events_during_binding = sum(1 for t in seen.values() if t < last_bound)
                result.last_event = max(seen.values()) - start if seen else 0.0
            if measured:
                result.events_written = _events_written(server.kubeconfig)
                result.lost_at_exit = _scheduled_without_event(server.kubeconfig)[1]
            result.cpu_total = cpu_end
            result.cpu_after_sync = cpu_end - cpu_at_sync
            result.peak_rss_mib = rss
            if profile and sched.profile_file.exists():
                result.client_share, result.shares = _client_share(sched.profile_file)
                if os.environ.get("BENCH_LIVE_PROFILE_OUT"):
                    Path(os.environ["BENCH_LIVE_PROFILE_OUT"]).write_bytes(sched.profile_file.read_bytes())
        finally:
            if sched.proc.poll() is None:
                sched.proc.kill()
            if keep := os.environ.get("BENCH_LIVE_LOG_DIR"):  # the scheduler's log, per case
                name = f"{mode}-{nodes}-{setup.tree_label or 'tree'}-{setup.latency_ms:g}ms.log".replace("/", "_")
                Path(keep, name).write_bytes(sched.log_file.read_bytes())
            if proxy is not None:
                proxy.stop()
            server.stop()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["backlog", "stream", "sync", "all"], default="all")
    parser.add_argument("--nodes", type=int, default=None)
    parser.add_argument("--pods", type=int, default=None)
    parser.add_argument("--bound", type=int, default=None, help="bound pods already in the cluster")
    parser.add_argument("--rate", type=float, default=1000.0, help="stream mode: pods created per second")
    parser.add_argument("--profile-share", action="store_true", help="also run under cProfile for the client/JSON share")
    parser.add_argument("--unschedulable", type=int, default=20, help="pods that fit no node, besides --pods")
    parser.add_argument("--plain-http", action="store_true",
                        help="plain HTTP and scheduler_perf's bare objects (no TLS, no kubelet status, no managedFields)")
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0], metavar="MS",
                        help="milliseconds a proxy adds to each of the scheduler's round trips (several: one run each)")
    parser.add_argument("--reset-every", type=int, default=0, metavar="N",
                        help="the proxy resets every Nth connection of the scheduler's (0: never)")
    parser.add_argument("--before", metavar="REV", help="also run each case with the scheduler of commit REV")
    parser.add_argument("--interrupt", choices=["term", "kill"],
                        help="stop the scheduler with SIGTERM or SIGKILL mid-burst (backlog mode)")
    parser.add_argument("--interrupt-at", type=float, default=0.5, help="the share of the pods bound at that moment")
    args = parser.parse_args(argv)
    cases: list[tuple[str, int, int, int]] = []
    sizes = [(args.nodes, args.pods)] if args.nodes else [(500, 2000), (5000, 10000)]
    for mode in (["backlog", "stream"] if args.mode == "all" else [args.mode]):
        if mode == "sync":
            continue
        for n, p in sizes:
            cases.append((mode, n, p or 2000, args.bound or 0))
    if args.mode in ("sync", "all"):
        cases.append(("sync", args.nodes or 5000, 0, args.bound if args.bound is not None else 150_000))
    warm_bytecode()
    print(f"machine: {os.cpu_count()} cores; test API server and kubesched run in separate processes; "
          f"{'plain HTTP, bare objects' if args.plain_http else 'TLS, real-shaped objects'}")
    with tempfile.TemporaryDirectory() as before_dir:
        trees = [(ROOT, "")]
        if args.before:
            subprocess.run(f"git -C {ROOT} archive {args.before} | tar -x -C {before_dir}", shell=True, check=True)
            trees.append((Path(before_dir), args.before))
        for mode, n, p, b in cases:
            real = not args.plain_http
            for latency in args.latency if mode != "sync" else [0.0]:
                for tree, label in trees:  # this tree and the one before, in turn
                    setup = Setup(latency_ms=latency, reset_every=args.reset_every, tree=tree, tree_label=label,
                                  interrupt=args.interrupt or "", interrupt_at=args.interrupt_at)
                    result = run_case(mode, n, p, b, args.rate, profile=False, unschedulable=args.unschedulable,
                                      real=real, setup=setup)
                    if args.profile_share:
                        profiled = run_case(mode, n, p, b, args.rate, profile=True, unschedulable=args.unschedulable,
                                            real=real, setup=setup)
                        result.client_share, result.shares = profiled.client_share, profiled.shares
                    print(result.line(), flush=True)
                    if result.shares:
                        print("    CPU shares (cProfile on the CPU clock, event-loop thread's functions): "
                              + ", ".join(f"{g} {s:.0%}" for g, s in result.shares.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
