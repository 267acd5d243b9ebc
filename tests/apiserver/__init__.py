"""A test Kubernetes API server on loopback for kubesched's live-mode tests.

It answers the calls a scheduler makes the way kube-apiserver v1.36 does (paths,
resourceVersion semantics, paging, filtered watches, bookmarks, WatchList,
binding, status patches, optimistic concurrency, Status errors), so the live
mode can be tested over real HTTP without a real cluster.

In-process (tests are synchronous; the server has its own thread and loop)::

    with APIServer(bookmark_interval=0.2) as server:      # or APIServer().start() / .stop()
        server.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {...}})
        server.faults.add(method="POST", path=r"/binding$", status=500, times=1)
        ...  # point the client at server.url
        assert ("POST", "/api/v1/namespaces/default/pods/p/binding") in server.requests

Standalone (for a benchmark's separate process)::

    python -m tests.apiserver --port 0 [--load FILE.json] [--bookmark-interval S] [--history N]
    # prints "READY http://127.0.0.1:PORT"; test controls under /_test/ (see control.py)

Modules: resources (the served table), storage (revision, objects, event log),
listing and options (GET collections), selectors, watch (fan-out, bookmarks),
writes and patching (PUT/PATCH/DELETE rules), admission (pod defaults, binding),
errors (Status bodies), faults, handlers (routing), control (/_test/), server.
"""

from tests.apiserver.faults import Fault, Faults
from tests.apiserver.server import APIServer

__all__ = ["APIServer", "Fault", "Faults"]
