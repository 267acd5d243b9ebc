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

Where a real v1.36.2 server answers differently from the generic rules, it answers as
the exchanges recorded from one (``transcript/``, checked by ``test_transcript.py``):
a resourceVersion=0 LIST ignores ``limit``, 429s are plain text, a too-new
resourceVersion is a 504 with ``Retry-After``, compaction is served from the watch cache
until ``restart()``, objects carry ``managedFields``. ``APIServer(tls=True)`` (``--tls``)
serves HTTPS with the certificate in ``tls/``; clients trust ``tls.CA_FILE``.

Modules: resources (the served table), storage (revision, objects, event log),
listing and options (GET collections), selectors, watch (fan-out, bookmarks),
writes and patching (PUT/PATCH/DELETE rules), admission (pod defaults, binding),
lifecycle (event validation, a pending pod's deletion), managed_fields, errors (Status
bodies), faults, handlers (routing), control (/_test/), tls, transcript, server.
"""

from tests.apiserver.faults import Fault, Faults
from tests.apiserver.server import APIServer

__all__ = ["APIServer", "Fault", "Faults"]
