"""Workload-aware scheduling in ``run``: the PodGroup informer and the check that the API
server serves PodGroups at all.

Upstream's scheduler, with GenericWorkload on, builds a PodGroup lister from its informer
factory (``scheduler.go``) and registers its event handlers on that informer
(``eventhandlers.go``: ``case fwk.PodGroup``), so the informer lists and watches
``scheduling.k8s.io/v1alpha2`` ``podgroups`` in every namespace; with the gate off there is
no informer. It reads no Workload: nothing in v1.36.2's ``pkg/scheduler`` lists them (the
workload controller turns Workloads into PodGroups), so neither does kubesched.

A cluster whose API server does not serve PodGroups (the alpha API needs
``--runtime-config=scheduling.k8s.io/v1alpha2=true`` and GenericWorkload on the API server
too) answers 404, or 403 to an account bound to ``system:kube-scheduler`` (authorization
comes before routing, and that role grants PodGroups only where the API server's gate is on). Upstream's informer would then retry forever and ``WaitForCacheSync``
would never return: the process runs, reports not ready and schedules nothing. kubesched
refuses to start instead, with one line saying what is missing (``pod_group_api_problem``):
the same outcome, said at once. With the gate off nothing is asked, so such a cluster
runs as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ...objects.podgroup import PodGroup, parse_pod_group
from ...scheduler.metrics import SchedulerMetrics
from ...scheduler.scheduler import Scheduler
from .client import ApiClient
from .errors import ApiError
from .handlers import PodGroupEvents
from .informer import Informer, Resource
from .pod_group_status import POD_GROUP_API

__all__ = ["POD_GROUPS", "parse_live_pod_group", "pod_group_api_problem", "pod_group_informer"]

log = logging.getLogger("kubesched.run")

POD_GROUPS = Resource(f"/apis/{POD_GROUP_API}/podgroups", "PodGroup")


def parse_live_pod_group(raw: dict[str, object]) -> PodGroup:
    """A PodGroup as the informer keeps it: parsed once, without its document (the condition
    writes diff the parsed conditions)."""
    return parse_pod_group(raw, keep_raw=False)


def pod_group_informer(api: ApiClient, scheduler: Scheduler, wake: Callable[[], None],
                       metrics: SchedulerMetrics | None, *, page_size: int, watch_list: bool) -> Informer[PodGroup]:
    """The PodGroup informer (every namespace), feeding ``Scheduler.on_pod_group_*``."""
    return Informer(api, POD_GROUPS, parse_live_pod_group, PodGroupEvents(scheduler, wake, metrics),
                    page_size=page_size, watch_list=watch_list, name="podgroups")


async def pod_group_api_problem(api: ApiClient, server: str, timeout: float) -> str | None:
    """Why PodGroups cannot be watched (one line), or None when they can. Transient failures
    (transport, 5xx, 429) are retried for ``timeout`` seconds, as the first access check is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.5
    while True:
        try:
            await api.request("GET", POD_GROUPS.path, params={"limit": "1"}, timeout=10.0)
            return None
        except ApiError as err:
            if err.is_not_found():
                return (f"GenericWorkload is on but the API server at {server} does not serve {POD_GROUP_API} "
                        "podgroups (404): enable them on kube-apiserver too (--feature-gates=GenericWorkload=true "
                        f"--runtime-config={POD_GROUP_API}=true), or run without GenericWorkload")
            if err.is_forbidden():  # RBAC answers before routing: a server without the API says 403 too
                return (f"forbidden by the API server's RBAC: {err.message} (system:kube-scheduler grants "
                        "podgroups only where kube-apiserver runs with GenericWorkload: turn it on there, or run "
                        "without GenericWorkload; see deploy/)")
            if not (err.is_transport() or err.status >= 500 or err.is_too_many_requests()):
                return f"listing {POD_GROUP_API} podgroups: {err.status} {err.reason}: {err.message}"
            if loop.time() + delay > deadline:
                return f"cannot list {POD_GROUP_API} podgroups at {server}: {err.message}"
            log.warning("waiting for the API server to list podgroups", extra={"server": server, "err": err.message})
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
