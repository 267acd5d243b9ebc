"""A TCP proxy that adds round-trip latency (and, if asked, resets connections), for
measuring `kubesched run` against an API server that is far away.

Every byte is forwarded unchanged (TLS passes through: the client still verifies the
API server's certificate), each direction held for half the added latency, so a request
and its answer take ``--latency`` milliseconds longer than without the proxy, as a
network round trip would; bytes keep their order. ``--reset-every N`` aborts every Nth
connection's client side with a TCP reset, after it has carried some traffic (a proxy or
load balancer dropping connections).

Run it in its own process (its CPU is not the scheduler's)::

    python benchmarks/latency_proxy.py --target 127.0.0.1:6443 --latency 20
    READY 127.0.0.1:40123

``bench_live.py --latency MS`` starts one between the scheduler and the test API server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import socket
import struct
import sys

try:
    import uvloop
except ImportError:  # optional: the proxy's own CPU matters little
    uvloop = None

__all__ = ["serve"]

_CHUNK = 1 << 16


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Forward what ``reader`` receives to ``writer``, each chunk ``delay`` seconds after it arrived."""
    loop = asyncio.get_running_loop()
    held: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def release() -> None:
        while True:
            due, data = await held.get()
            if not data:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError, RuntimeError):
            writer.write_eof()

    releaser = asyncio.create_task(release())
    try:
        while data := await reader.read(_CHUNK):
            held.put_nowait((loop.time() + delay, data))
    except (ConnectionError, OSError):
        pass
    held.put_nowait((loop.time() + delay, b""))
    with contextlib.suppress(ConnectionError, OSError):
        await releaser


def _abort_with_reset(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def serve(target_host: str, target_port: int, latency: float, reset_every: int = 0,
                reset_after: float = 0.5, port: int = 0) -> asyncio.Server:
    """Listen on 127.0.0.1:``port`` (0: any) and relay to the target; ``latency`` in seconds."""
    half = latency / 2
    counter = itertools.count(1)

    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            _abort_with_reset(client_writer)
            return
        pumps = asyncio.gather(_pump(client_reader, server_writer, half), _pump(server_reader, client_writer, half))
        try:
            if reset_every and next(counter) % reset_every == 0:
                try:
                    await asyncio.wait_for(asyncio.shield(pumps), reset_after)
                except asyncio.TimeoutError:
                    _abort_with_reset(client_writer)
                    server_writer.transport.abort()
            await pumps
        except (ConnectionError, OSError):
            pass
        finally:
            for w in (client_writer, server_writer):
                w.close()

    return await asyncio.start_server(relay, "127.0.0.1", port)


async def _main(args: argparse.Namespace) -> None:
    host, _, port = args.target.rpartition(":")
    server = await serve(host, int(port), args.latency / 1000.0, args.reset_every)
    address = server.sockets[0].getsockname()
    print(f"READY {address[0]}:{address[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True, help="HOST:PORT of the API server")
    parser.add_argument("--latency", type=float, default=20.0, help="milliseconds added to each round trip")
    parser.add_argument("--reset-every", type=int, default=0, help="reset every Nth connection (0: never)")
    args = parser.parse_args(argv)
    if uvloop is not None:
        uvloop.install()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
