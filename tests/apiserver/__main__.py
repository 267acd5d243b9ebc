"""``python -m tests.apiserver``: run the test API server standalone for a benchmark process.

Prints ``READY http://127.0.0.1:PORT`` (``https`` with ``--tls``) once serving; stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

import orjson

from tests.apiserver.server import APIServer
from tests.apiserver.workload_resources import DEFAULT_GATES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.apiserver")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--load", help="JSON file: a list of objects or {\"items\": [...]}")
    parser.add_argument("--bookmark-interval", type=float, default=1.0)
    parser.add_argument("--history", type=int, default=100_000)
    parser.add_argument("--tls", action="store_true", help="serve HTTPS (clients trust tests/apiserver/tls/ca.crt)")
    parser.add_argument("--feature-gates", default=",".join(sorted(DEFAULT_GATES)),
                        help="alpha gates on, comma-separated (default: workload-aware scheduling's; '' for none)")
    args = parser.parse_args(argv)
    gates = frozenset(g.strip() for g in args.feature_gates.split(",") if g.strip())
    server = APIServer(bookmark_interval=args.bookmark_interval, history=args.history, port=args.port,
                       tls=args.tls, feature_gates=gates).start()
    if args.load:
        with open(args.load, "rb") as handle:
            data = orjson.loads(handle.read())
        server.load(data["items"] if isinstance(data, dict) else data)
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print(f"READY {server.url}", flush=True)
    done.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
