"""The Lease's own events: "<identity> became leader", "<identity> stopped leading".

client-go's ``LeaseLock.RecordEvent`` reports leadership changes as core/v1 Events about
the Lease, through the legacy recorder kube-scheduler builds for leader election (its
source component is the first profile's scheduler name). Operators read them with
``kubectl -n kube-system get events --field-selector involvedObject.name=kube-scheduler``,
so kubesched writes the same ones, in the same shape, to the same API.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone

from .leader import ApiRequester

__all__ = ["LeaseEventRecorder"]

log = logging.getLogger("kubesched.leader")

LEASE_API_VERSION = "coordination.k8s.io/v1"


class LeaseEventRecorder:
    """Writes one core/v1 Event per leadership change, in the background (an event that
    cannot be written is logged and dropped, as client-go's recorder drops it)."""

    def __init__(self, requester: ApiRequester, component: str, *, namespace: str, name: str,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self._requester = requester
        self._component = component
        self._namespace = namespace
        self._name = name
        self._wall = wall_clock
        self._writing: set[asyncio.Task[None]] = set()

    def record(self, message: str, lease: Mapping[str, object] | None) -> None:
        """``message`` ("<identity> became leader") about ``lease`` (the object last read or
        written; its uid and resourceVersion go into the reference)."""
        task = asyncio.get_running_loop().create_task(self._write(self.event(message, lease)))
        self._writing.add(task)
        task.add_done_callback(self._writing.discard)

    def event(self, message: str, lease: Mapping[str, object] | None) -> dict[str, object]:
        """The Event client-go's ``makeEvent`` builds: named ``<lease>.<nanoseconds in hex>``."""
        now = self._wall()
        stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta = lease.get("metadata") if lease is not None else None
        meta = meta if isinstance(meta, Mapping) else {}
        involved: dict[str, object] = {"kind": "Lease", "namespace": self._namespace, "name": self._name,
                                       "apiVersion": LEASE_API_VERSION}
        for key, field in (("uid", "uid"), ("resourceVersion", "resourceVersion")):
            if meta.get(key):
                involved[field] = meta[key]
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{self._name}.{int(now * 1e9):x}", "namespace": self._namespace},
            "involvedObject": involved,
            "reason": "LeaderElection", "message": message, "type": "Normal",
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
            "source": {"component": self._component},
            "reportingComponent": self._component, "reportingInstance": "",
        }

    async def _write(self, event: dict[str, object]) -> None:
        try:
            await self._requester.request("POST", f"/api/v1/namespaces/{self._namespace}/events", body=event)
        except Exception as err:  # noqa: BLE001 - an event is never worth more than a log line
            log.info("could not write the LeaderElection event: %s", err)

    async def drain(self, timeout: float = 2.0) -> None:
        """Wait a little for events still being written (at shutdown: "stopped leading")."""
        if self._writing:
            await asyncio.wait(set(self._writing), timeout=timeout)
