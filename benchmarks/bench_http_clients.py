"""CPU per request of the HTTP clients run could use, over TLS, against the test API server.

Issue 26 asks for the API client to be chosen by measurement. This runs the same
requests (a small GET, ``CONCURRENCY`` at once, ``--requests`` of them) through run's
``ApiClient`` (aiohttp) and through httpx over HTTP/1.1 (httpx speaks HTTP/2 only with
the pure-Python ``h2`` package on top of the same machinery, which can only add to its
cost), the test API server in its own process, and prints the client process's CPU per
request, each client in turn, ``--runs`` times::

    python benchmarks/bench_http_clients.py
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubesched.cluster.kube.client import ApiClient  # noqa: E402
from kubesched.cluster.kube.connection import Connection  # noqa: E402
from tests.apiserver.tls import CA_FILE  # noqa: E402

CONCURRENCY = 16
PATH = "/api/v1/namespaces"


async def _aiohttp(url: str, requests: int) -> float:
    context = ssl.create_default_context(cafile=str(CA_FILE))
    async with ApiClient(Connection(server=url, ssl=context, token=lambda: "t", basic_auth=None, qps=0)) as api:
        await api.write("GET", PATH)  # the connection made before the clock starts
        left = requests

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await api.write("GET", PATH)

        cpu = time.process_time()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return (time.process_time() - cpu) / requests


async def _httpx(url: str, requests: int) -> float:
    context = ssl.create_default_context(cafile=str(CA_FILE))
    async with httpx.AsyncClient(base_url=url, verify=context, limits=httpx.Limits(max_connections=CONCURRENCY),
                                 headers={"Authorization": "Bearer t", "Accept": "application/json"}) as client:
        (await client.get(PATH)).raise_for_status()
        left = requests

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                (await client.get(PATH)).raise_for_status()

        cpu = time.process_time()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return (time.process_time() - cpu) / requests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    server = subprocess.Popen([sys.executable, "-m", "tests.apiserver", "--port", "0", "--tls"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = next(line.split()[1] for line in server.stdout if line.startswith("READY "))
    try:
        figures: dict[str, list[float]] = {"aiohttp (run's ApiClient)": [], "httpx, HTTP/1.1": []}
        for _ in range(args.runs):  # in turn
            figures["aiohttp (run's ApiClient)"].append(asyncio.run(_aiohttp(url, args.requests)))
            figures["httpx, HTTP/1.1"].append(asyncio.run(_httpx(url, args.requests)))
        for name, cpu in figures.items():
            print(f"{name:26s} CPU per request: {', '.join(f'{c * 1e6:.0f}' for c in cpu)} µs "
                  f"({CONCURRENCY} at once over TLS, {args.requests} requests a run)")
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
