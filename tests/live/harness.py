"""Running the real ``kubesched run`` code path against the test API server.

``Kubesched`` runs ``run_scheduler`` (what the CLI runs, minus argument parsing) on an
event loop in a thread of its own, connected through a kubeconfig like any client.
Tests inspect the scheduler only through ``call``, which runs a function on that
loop, so they never race the scheduler's own thread.

``invariants`` is the check every live test ends with: every pod bound exactly once
or pending with the right condition, no node over its allocatable, no pending pod of
ours outside the queue.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

import yaml

from kubesched.cluster.kube.app import RunSettings, run_scheduler
from kubesched.cluster.kube.connection import load_connection
from kubesched.cluster.kube.driver import LiveOptions, LiveScheduler
from kubesched.cluster.kube.events import EventBroadcaster
from kubesched.framework.config import SchedulerConfig, parse_config
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import in_tree_registry
from kubesched.objects.quantity import milli_value, value
from tests.apiserver import APIServer
from tests.apiserver.resources import resource_for
from tests.apiserver.tls import ca_data

T = TypeVar("T")


def wait_until(predicate: Callable[[], object], timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def write_kubeconfig(path: Path, server: str, token: str = "test-token") -> Path:
    """A kubeconfig for the test server; over https it trusts the test CA (and nothing else)."""
    cluster: dict[str, str] = {"server": server}
    if server.startswith("https://"):
        cluster["certificate-authority-data"] = ca_data()
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [{"name": "test", "user": {"token": token}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }))
    return path


def scheduler_config(raw: dict[str, Any] | None = None, *, leader_elect: bool = False,
                     lease_name: str = "kube-scheduler", lease_seconds: float = 15.0) -> SchedulerConfig:
    doc: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    doc.update(raw or {})
    config = parse_config(doc, in_tree_registry())
    le = config.leader_election
    le.leader_elect = leader_elect
    le.resource_name = lease_name
    if lease_seconds != 15.0:
        le.lease_duration, le.renew_deadline, le.retry_period = lease_seconds, lease_seconds * 2 / 3, lease_seconds / 8
    return config


class Kubesched:
    def __init__(self, server: APIServer, kubeconfig: Path, config: SchedulerConfig | None = None,
                 identity: str = "kubesched-test", options: LiveOptions | None = None,
                 registry: Registry | None = None) -> None:
        self.server = server
        self.registry = registry or in_tree_registry()  # out-of-tree plugins: the in-tree ones plus theirs
        self.kubeconfig = kubeconfig
        self.config = config or scheduler_config()
        self.identity = identity
        self.options = options or LiveOptions(binding_workers=4)
        self.live: LiveScheduler | None = None
        self.exit_code: int | None = None
        self.events_lost_at_exit: int | None = None  # known once stopped
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._main, name=f"kubesched-{identity}", daemon=True)

    def start(self, wait_synced: bool = True) -> "Kubesched":
        self._thread.start()
        if not self._started.wait(20):
            raise AssertionError(f"kubesched did not start: {self.error!r}")
        if wait_synced:
            wait_until(lambda: self.call(lambda live: live.synced()), 20, "informers synced")
        return self

    def _main(self) -> None:
        connection = load_connection(str(self.kubeconfig), qps=5000, burst=5000)
        settings = RunSettings(self.config, connection, self.registry, bind_address="127.0.0.1", port=0,
                               identity=self.identity, startup_timeout=5.0, options=self.options)

        async def main() -> int:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            return await run_scheduler(settings, stop=self._stop, started=self._on_started)

        try:
            self.exit_code = asyncio.run(main())
        except BaseException as err:  # noqa: BLE001 - reported to the test
            self.error = err
            self._started.set()

    def _on_started(self, live: LiveScheduler) -> None:
        self.live = live
        self._started.set()

    def call(self, fn: Callable[[LiveScheduler], T], timeout: float = 10.0) -> T:
        """Run ``fn(live)`` on the scheduler's own event loop and return what it returns."""
        assert self._loop is not None and self.live is not None, "kubesched is not running"
        live = self.live
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn(live))
            except BaseException as err:  # noqa: BLE001
                future.set_exception(err)

        self._loop.call_soon_threadsafe(run)
        return future.result(timeout)

    def stop(self, timeout: float = 15.0) -> int | None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise AssertionError(f"kubesched did not stop; tasks left: {self._tasks_left()}")
        room = self.live.event_room if self.live is not None else None
        if isinstance(room, EventBroadcaster):
            self.events_lost_at_exit = room.stats.lost_at_exit
        return self.exit_code

    def _tasks_left(self) -> list[str]:
        loop = self._loop
        if loop is None or loop.is_closed():
            return []
        found: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        loop.call_soon_threadsafe(lambda: found.set_result(
            [f"{t.get_name()}: {t.get_coro()!r} at {t.get_stack(limit=3)}" for t in asyncio.all_tasks(loop)]))
        try:
            return found.result(2)
        except concurrent.futures.TimeoutError:
            return ["(the loop does not answer)"]

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


# -- objects ------------------------------------------------------------------------
def node(name: str, cpu: str = "4", memory: str = "32Gi", pods: int = 110, labels: dict[str, str] | None = None,
         unschedulable: bool = False, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    capacity = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    spec: dict[str, Any] = {}
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = taints
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec,
            "status": {"capacity": capacity, "allocatable": capacity,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, cpu: str = "100m", memory: str = "100Mi", namespace: str = "default",
        scheduler: str = "default-scheduler", priority: int | None = None, node_name: str | None = None,
        labels: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1",
                        "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
    }
    if priority is not None:
        spec["priority"] = priority
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
            "spec": spec, "status": {"phase": "Pending"}}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def node_of(server: APIServer, name: str, namespace_: str = "default") -> str | None:
    obj = server.get("Pod", namespace_, name)
    return (obj.get("spec") or {}).get("nodeName") if obj else None


def events(server: APIServer) -> list[dict[str, Any]]:
    """The events.k8s.io/v1 Events recorded so far (kubesched writes no core v1 Events)."""
    resource = resource_for("Event", "events.k8s.io/v1")
    with server.store.lock:
        return [dict(e) for e in server.store.table(resource).values()]


def scheduled_condition(server: APIServer, name: str, namespace_: str = "default") -> dict[str, Any] | None:
    obj = server.get("Pod", namespace_, name)
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == "PodScheduled":
            return cond
    return None


# -- the end-of-test check --------------------------------------------------------------
@dataclass
class Figures:
    pods: int
    bound: int
    pending: int
    lost: int  # pending pods of ours that kubesched does not hold anywhere
    double_bound: int  # pods with more than one successful binding
    overcommitted: int  # nodes whose bound pods request more than allocatable
    wrong_condition: list[str]
    events_dropped: int = 0  # events the scheduler gave up writing


def invariants(server: APIServer, sched: Kubesched | None, schedulers: tuple[str, ...] = ("default-scheduler",),
               expect_condition: bool = True) -> Figures:
    pods = [p for p in server.list("Pod") if (p.get("spec") or {}).get("schedulerName", "default-scheduler") in schedulers
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    nodes = {n["metadata"]["name"]: n for n in server.list("Node")}
    requested: dict[str, list[float]] = {}
    bound = pending = 0
    pending_uids: list[str] = []
    wrong: list[str] = []
    for p in server.list("Pod"):
        spec = p.get("spec") or {}
        if not spec.get("nodeName") or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        acc = requested.setdefault(spec["nodeName"], [0.0, 0.0, 0.0])
        for c in spec.get("containers") or ():
            req = (c.get("resources") or {}).get("requests") or {}
            acc[0] += milli_value(req.get("cpu", "0"))
            acc[1] += value(req.get("memory", "0"))
        acc[2] += 1
    for p in pods:
        if (p.get("spec") or {}).get("nodeName"):
            bound += 1
        else:
            pending += 1
            pending_uids.append(p["metadata"]["uid"])
            if expect_condition:
                cond = next((c for c in (p.get("status") or {}).get("conditions") or () if c.get("type") == "PodScheduled"), None)
                if cond is None or cond.get("status") != "False" or cond.get("reason") not in ("Unschedulable", "SchedulerPreemption"):
                    wrong.append(p["metadata"]["name"])
    over = 0
    for name, (cpu, mem, count) in requested.items():
        alloc = (nodes.get(name) or {}).get("status", {}).get("allocatable") or {}
        if name not in nodes:
            continue
        if cpu > milli_value(alloc.get("cpu", "0")) or mem > value(alloc.get("memory", "0")) or count > int(alloc.get("pods", "110")):
            over += 1
    lost = events_dropped = 0
    if sched is not None and sched.running:
        def held(live: LiveScheduler) -> int:
            s = live.scheduler
            assert s is not None
            missing = 0
            for uid in pending_uids:
                if s.queue.where(uid) == "" and s.cache.get_pod(uid) is None and s.waiting_pods.get(uid) is None:
                    missing += 1
            return missing
        lost = sched.call(held)

        def dropped(live: LiveScheduler) -> int:
            room = live.event_room
            return room.stats.dropped if isinstance(room, EventBroadcaster) else 0
        events_dropped = sched.call(dropped)
    # A pod kubesched bound twice would carry two Scheduled events (or one with a series).
    scheduled: dict[str, int] = {}
    for event in events(server):
        if event.get("reason") == "Scheduled":
            uid = str((event.get("regarding") or {}).get("uid"))
            scheduled[uid] = scheduled.get(uid, 0) + int((event.get("series") or {}).get("count") or 1)
    double = sum(1 for n in scheduled.values() if n > 1)
    return Figures(len(pods), bound, pending, lost, double, over, wrong, events_dropped)
