"""The live benchmark: `kubesched run` against the test API server, each in its own process.

Workloads (nodes from upstream scheduler_perf's ``node-default.yaml``, pods from
``pod-default.yaml``, as ``common.py`` builds them):

* ``backlog``: nodes and all measured pods are in the API server before the scheduler
  starts; measured from the scheduler's informers synced (``/readyz``) to the last pod
  bound.
* ``stream``: the scheduler is up first; pods are created through the API at a steady
  rate (``--rate``) and each pod's create->bound latency is taken from a watch.
* ``sync``: no pending pods; the time from start to ``/readyz`` (informers synced) with
  many bound pods (default 5,000 nodes, 150,000 bound pods), and the RSS after it.

For each it prints pods/s, create->bound latency p50/p99, the scheduler process's CPU
seconds per scheduled pod (its own rusage, whole process and after sync), its peak RSS,
and (with ``--profile-share``, a second run under cProfile, main thread only) the share
of its CPU spent in the API client and JSON.

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
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import bind_round_robin, make_nodes, make_pods  # noqa: E402

from kubesched.cluster.kube.client import ApiClient  # noqa: E402
from kubesched.cluster.kube.connection import load_connection  # noqa: E402

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
        return (f"{self.mode:8s} {self.nodes:6d} nodes {self.bound:7d}/{self.pods} pods: {rate:8.0f} pods/s, "
                f"latency p50 {p50:.0f} ms p99 {p99:.0f} ms, CPU {per_pod:.2f} ms/pod after sync "
                f"({per_pod_all:.2f} ms/pod whole process), sync {self.sync_seconds:.1f} s, "
                f"peak RSS {self.peak_rss_mib:.0f} MiB{share}{context}")


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


class APIServerProcess:
    def __init__(self, objects: list[dict[str, Any]], workdir: Path) -> None:
        load = workdir / "load.json"
        load.write_bytes(orjson.dumps(objects))
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.apiserver", "--port", "0", "--load", str(load)],
                                     cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("READY "):
                self.url = line.split()[1]
                break
        else:
            raise RuntimeError("the test API server did not start")
        kubeconfig = workdir / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: " + self.url + "\n"
            "users:\n- name: bench\n  user:\n    token: bench\ncontexts:\n- name: bench\n  context:\n"
            "    cluster: bench\n    user: bench\ncurrent-context: bench\n")
        self.kubeconfig = str(kubeconfig)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class SchedulerProcess:
    def __init__(self, kubeconfig: str, workdir: Path, profile: bool) -> None:
        self.port = _free_port()
        self.profile_file = workdir / "scheduler.prof"
        args = ["run", "--kubeconfig", kubeconfig, "--leader-elect=false", "--port", str(self.port),
                "--bind-address", "127.0.0.1", "--kube-api-qps", "100000", "--kube-api-burst", "100000"]
        prefix = [sys.executable, "-m", "cProfile", "-o", str(self.profile_file)] if profile else [sys.executable]
        self.started = time.monotonic()
        self.proc = subprocess.Popen([*prefix, "-m", "kubesched.cli.main", *args], cwd=ROOT,
                                     stderr=open(workdir / "scheduler.log", "w"))
        self.ps = psutil.Process(self.proc.pid)

    def cpu(self) -> float:
        t = self.ps.cpu_times()
        return t.user + t.system

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

    def stop(self) -> tuple[float, float]:
        cpu, rss = self.cpu(), _peak_rss_mib(self.proc.pid)
        self.proc.terminate()
        self.proc.wait(30)
        return cpu, rss


class BindWatch:
    """Watches pods in the benchmark's own process and notes when each becomes bound."""

    def __init__(self, url_kubeconfig: str, expected: int) -> None:
        self.kubeconfig = url_kubeconfig
        self.expected = expected
        self.bound: dict[str, float] = {}
        self.created: dict[str, float] = {}
        self.done = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready = threading.Event()
        asyncio.run_coroutine_threadsafe(self._watch(), self._loop)
        self._ready.wait(30)

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
                task = asyncio.create_task(api.request("POST", "/api/v1/namespaces/default/pods", body=pod))
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


def run_case(mode: str, nodes: int, pods: int, bound: int, rate: float, profile: bool) -> Result:
    node_objs = make_nodes(nodes)
    bound_pods = bind_round_robin(make_pods(bound, prefix="bound-"), node_objs) if bound else []
    measured = make_pods(pods, prefix="pod-") if mode != "sync" else []
    preload = [*node_objs, *bound_pods, *(measured if mode == "backlog" else [])]
    result = Result(mode, nodes, len(measured))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        server = APIServerProcess(preload, work)
        watch = BindWatch(server.kubeconfig, len(measured)) if measured else None
        sched = SchedulerProcess(server.kubeconfig, work, profile)
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
                watch.create(measured, rate)
            if watch is not None:
                watch.done.wait(600)
                end = max(watch.bound.values()) if watch.bound else time.monotonic()
                result.seconds = end - start
                result.bound = len(watch.bound)
                if mode == "stream":
                    result.latencies = [watch.bound[n] - watch.created[n] for n in watch.bound if n in watch.created]
                else:
                    result.latencies = [t - ready for t in watch.bound.values()]
            cpu_end, rss = sched.stop()
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
    print(f"machine: {os.cpu_count()} cores; test API server and kubesched run in separate processes")
    for mode, n, p, b in cases:
        result = run_case(mode, n, p, b, args.rate, profile=False)
        if args.profile_share:
            profiled = run_case(mode, n, p, b, args.rate, profile=True)
            result.client_share, result.shares = profiled.client_share, profiled.shares
        print(result.line(), flush=True)
        if result.shares:
            print("    CPU shares (cProfile, event-loop thread): "
                  + ", ".join(f"{g} {s:.0%}" for g, s in result.shares.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
