"""A test Kubernetes API server on loopback for kubesched's live-mode tests.

It answers the calls a scheduler makes the way kube-apiserver does (paths,
resourceVersion semantics, paging, filtered watches, bookmarks, binding,
status patches, optimistic concurrency, Status errors), so the live-mode client
can be tested over real HTTP without a real cluster. See ``server.APIServer``.
"""

from tests.apiserver.faults import Fault, Faults
from tests.apiserver.server import APIServer

__all__ = ["APIServer", "Fault", "Faults"]
