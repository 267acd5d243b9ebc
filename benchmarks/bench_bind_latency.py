"""Binds per second through added round-trip latency: run's binding path on its own.

`bench_live.py --latency` measures the whole of `kubesched run` against the test API
server, whose own CPU (Python, one process, on the same two cores) caps it at a few
hundred requests a second: on a loaded machine that cap, not the round trip, decides.
This benchmark keeps only what issue 26's item 3 is about: run's API client (aiohttp,
TLS, the request pool), its binding tasks (``BindingPool.direct``) and event writers
(``EventBroadcaster``), sharing one ``ConcurrencyLimit`` as in run, against a trivial
TLS server in its own process (answers each bind and event with 201 at once) through
``latency_proxy.py`` (its own process). Each pod is one bind and one Scheduled event.

For each latency it prints binds/s and events/s, with the concurrency found by trying
(``adaptive``) and with it pinned (``--fixed N``; ``fixed 32``: run before issue 26), and the
bench process's CPU per pod (the client side: requests, TLS, the new connections)::

    python benchmarks/bench_bind_latency.py                      # 5, 50 and 200 ms, 3,000 pods
    python benchmarks/bench_bind_latency.py --latency 200 --pods 10000
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import subprocess
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubesched.cluster.kube.binding import BindingPool  # noqa: E402
from kubesched.cluster.kube.client import ApiClient  # noqa: E402
from kubesched.cluster.kube.concurrency import MOST, ConcurrencyLimit  # noqa: E402
from kubesched.cluster.kube.connection import Connection  # noqa: E402
from kubesched.cluster.kube.events import EventBroadcaster, ObjectRef  # noqa: E402
from kubesched.objects.pod import PodInfo, parse_pod  # noqa: E402
from tests.apiserver.tls import CA_FILE  # noqa: E402

SERVER = """
import asyncio, sys
from aiohttp import web
sys.path.insert(0, sys.argv[1])
from tests.apiserver.tls import server_context

async def created(request):
    await request.read()
    return web.Response(status=201, body=b'{"kind":"Status","status":"Success"}', content_type="application/json")

async def main():
    app = web.Application()
    app.router.add_post("/{tail:.*}", created)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context())
    await site.start()
    print("READY", site._server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _start(command: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY "):
        raise RuntimeError(f"{command[:3]} did not start")
    return proc, line.split()[1]


def _pods(count: int) -> list[PodInfo]:
    return [parse_pod({"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
                       "spec": {"containers": []}}) for i in range(count)]


async def _run(url: str, pods: list[PodInfo], fixed: int) -> tuple[float, float, float, int]:
    """binds/s, events/s (both to the last one), CPU seconds per pod, the limit at the end."""
    context = ssl.create_default_context(cafile=str(CA_FILE))
    conn = Connection(server=url, ssl=context, token=lambda: "t", basic_auth=None, qps=0)
    limit = ConcurrencyLimit() if not fixed else ConcurrencyLimit(least=fixed, most=fixed)
    async with ApiClient(conn) as api, ApiClient(conn, max_connections=MOST) as events_api:
        broadcaster = EventBroadcaster(events_api, qps=0, concurrency=limit)
        writer = asyncio.create_task(broadcaster.run())
        pool = BindingPool(asyncio.get_running_loop(), 1, lambda: None)
        last_bind = 0.0

        async def bind(pod: PodInfo, node: str) -> None:
            await api.write("POST", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding",
                            body={"kind": "Binding", "target": {"name": node}})

        def done(pod: PodInfo) -> object:
            def completed(status: object) -> None:
                nonlocal last_bind
                last_bind = time.perf_counter()
                broadcaster.record(ObjectRef("Pod", pod.namespace, pod.name, pod.uid), None, "Normal", "Scheduled",
                                   "Binding", f"Successfully assigned {pod.key} to n1")
            return completed

        start = pool.direct(bind, limit)
        cpu, began = time.process_time(), time.perf_counter()
        for pod in pods:
            start(pod, "n1", done(pod))  # type: ignore[arg-type]
        await pool.drain(600)
        await broadcaster.shutdown(600)
        ended = time.perf_counter()
        cpu = time.process_time() - cpu
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        pool.shutdown()
        return len(pods) / (last_bind - began), broadcaster.stats.written / (ended - began), cpu / len(pods), \
            limit.limit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, nargs="+", default=[5.0, 50.0, 200.0], metavar="MS")
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--fixed", type=int, nargs="*", default=[32], metavar="N",
                        help="also run with the concurrency pinned at N (32: run before issue 26)")
    args = parser.parse_args(argv)
    server, port = _start([sys.executable, "-c", SERVER, str(ROOT)])
    try:
        for latency in args.latency:
            proxy, address = _start([sys.executable, str(ROOT / "benchmarks" / "latency_proxy.py"), "--target",
                                     f"127.0.0.1:{port}", "--latency", str(latency)])
            try:
                for fixed in (0, *args.fixed):  # in turn, each against the same proxy
                    binds, events, cpu, limit = asyncio.run(_run(f"https://{address}", _pods(args.pods), fixed))
                    label = f"fixed {fixed}" if fixed else "adaptive"
                    print(f"+{latency:g} ms RTT, {label:8s}: {binds:6.0f} binds/s, {events:6.0f} events/s (to the "
                          f"last), client CPU {cpu * 1000:.2f} ms/pod, {limit} binds at once at the end", flush=True)
            finally:
                proxy.terminate()
                proxy.wait(10)
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
