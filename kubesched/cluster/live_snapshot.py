"""A snapshot taken from an API server, with the live mode's own list code.

``kubesched simulate --kubeconfig FILE`` lists what ``kubesched run`` would list for the
same configuration: nodes, namespaces, the pods not in a terminal phase, and every kind
the profiles' plugins read (found as the live mode finds them, by building the
scheduler and asking its object stores), plus PriorityClasses (pods written before
admission name one), PodDisruptionBudgets (a drain's check reads them), and the
workload-aware scheduling API's PodGroups and Workloads (``scheduling.k8s.io/v1alpha2``, an
alpha API most clusters do not serve: its 404 is no failure, and a note only when
GenericWorkload is on). Each kind is
one paginated LIST (``Reflector.list_once``: ``limit``/``continue``, a consistent
read), only ``get``/``list``: ``deploy/snapshot-reader`` is the ClusterRole it needs.

The objects are compiled as they arrive (and go through the what-if edits, if any), so
a large cluster is never held as JSON; ``save`` writes them, as listed, to a JSON
``List`` that ``simulate FILE`` reads later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from ..clock import VirtualClock
from ..framework.config import SchedulerConfig
from ..framework.preemption.pdb import PDB_API_VERSION, PDB_KIND, PDB_PLURAL
from ..framework.registry import Registry
from ..scheduler.factory import new_scheduler
from .dump_reader import DumpObject
from .kube.client import ApiClient
from .kube.connection import Connection
from .kube.driver import collection_path
from .kube.errors import ApiError
from .kube.informer import POD_FIELD_SELECTOR, Resource
from .kube.reflector import Reflector
from .simulated import SimulatedCluster
from .snapshot import (WORKLOAD_API_VERSION, ClusterSnapshot, LoadProblem, ObjectEdits, SnapshotBuilder, SnapshotError,
                       gc_paused)
from .list_writer import ListWriter

__all__ = ["ListedKind", "ListWriter", "LiveSnapshot", "listed_kinds", "take_snapshot", "PAGE_SIZE"]

PAGE_SIZE = 500  # the live mode's page size
Progress = Callable[[str, int], None]  # (kind's plural, objects listed so far of it)


@dataclass(frozen=True, slots=True)
class ListedKind:
    api_version: str
    kind: str
    plural: str
    field_selector: str = ""
    optional: bool = False  # a kind the server may not serve (a 404 is a note, not a failure)
    # An optional kind nothing reads under the gates given (kept for a saved snapshot): its
    # 404 is not even a note, and a 403 (a role without it) only a note.
    quiet: bool = False

    @property
    def path(self) -> str:
        return collection_path(self.api_version, self.plural)


@dataclass(slots=True)
class LiveSnapshot:
    snapshot: ClusterSnapshot
    counts: dict[str, int] = field(default_factory=dict)  # plural -> objects listed
    notes: list[str] = field(default_factory=list)  # kinds the server does not serve
    seconds: float = 0.0


def listed_kinds(config: SchedulerConfig, registry: Registry) -> list[ListedKind]:
    """What ``kubesched run`` would list for ``config``, nodes first and pods last (so that
    pods find their nodes read), plus PriorityClasses and PodDisruptionBudgets."""
    clock = VirtualClock()
    scheduler = new_scheduler(config, SimulatedCluster(clock), clock, registry)
    kinds = [ListedKind("v1", "Node", "nodes"), ListedKind("v1", "Namespace", "namespaces"),
             ListedKind("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses")]
    seen = {(k.api_version, k.kind) for k in kinds}
    for store in scheduler.hub.object_stores.all():
        if (store.api_version, store.kind) not in seen:
            seen.add((store.api_version, store.kind))
            kinds.append(ListedKind(store.api_version, store.kind, store.plural, optional="/" in store.api_version))
    if (PDB_API_VERSION, PDB_KIND) not in seen:
        kinds.append(ListedKind(PDB_API_VERSION, PDB_KIND, PDB_PLURAL, optional=True))
    quiet = not registry.features.enabled("GenericWorkload")
    for kind, plural in (("PodGroup", "podgroups"), ("Workload", "workloads")):
        if (WORKLOAD_API_VERSION, kind) not in seen:
            kinds.append(ListedKind(WORKLOAD_API_VERSION, kind, plural, optional=True, quiet=quiet))
    kinds.append(ListedKind("v1", "Pod", "pods", field_selector=POD_FIELD_SELECTOR))
    return kinds


class _Feed:
    """The reflector's sink for one kind: each item typed, saved, edited and compiled at once."""

    def __init__(self, listed: ListedKind, source: str, builder: SnapshotBuilder, edits: ObjectEdits | None,
                 saver: ListWriter | None, progress: Progress | None) -> None:
        self._listed = listed
        self._source = source
        self._builder = builder
        self._edits = edits
        self._saver = saver
        self._progress = progress
        self.count = 0

    def prepare(self, obj: dict[str, object]) -> object:
        obj["apiVersion"] = self._listed.api_version  # list items come without them
        obj["kind"] = self._listed.kind
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
        if self._saver is not None:
            self._saver.add(obj)
        self.count += 1
        found = DumpObject(obj, 1, self.count - 1)
        if self._edits is None:
            self._builder.add(self._source, obj, 1, self.count - 1)
        else:
            for where, edited in self._edits.feed(self._source, found):
                self._builder.add(where, edited.obj, edited.document, edited.item)
        if self._progress is not None and self.count % PAGE_SIZE == 0:
            self._progress(self._listed.plural, self.count)
        return None  # nothing kept: the builder has it

    def replace(self, items: Sequence[object], resource_version: str) -> None:  # not called by list_once
        pass

    def apply(self, event_type: str, obj: dict[str, object]) -> None:  # no watch
        pass


async def _list_all(conn: Connection, kinds: list[ListedKind], source: str, builder: SnapshotBuilder,
                    edits: ObjectEdits | None, saver: ListWriter | None, progress: Progress | None,
                    result: LiveSnapshot) -> None:
    async with ApiClient(conn) as api:
        for listed in kinds:
            feed = _Feed(listed, source, builder, edits, saver, progress)
            reflector = Reflector(api, Resource(listed.path, listed.kind, listed.field_selector), feed,
                                  page_size=PAGE_SIZE, watch_list=False, name=listed.plural)
            try:
                await reflector.list_once()
            except ApiError as err:
                if err.status == 404 and listed.optional:
                    if not listed.quiet:
                        result.notes.append(f"{listed.plural} ({listed.api_version}): not served by this API server")
                    continue
                if err.status == 403 and listed.quiet:  # a reader's role of before these kinds
                    result.notes.append(f"{listed.plural} ({listed.api_version}): not listed: {err}")
                    continue
                raise SnapshotError([LoadProblem(source, "", "", f"listing {listed.plural}: {err}")]) from None
            result.counts[listed.plural] = feed.count
            if progress is not None:
                progress(listed.plural, feed.count)


def take_snapshot(conn: Connection, kinds: list[ListedKind], source: str, *, plugin_kinds: frozenset[str] = frozenset(),
                  keep_raw_objects: bool = False, edits: ObjectEdits | None = None, save: BinaryIO | None = None,
                  progress: Progress | None = None) -> LiveSnapshot:
    """List ``kinds`` from the API server of ``conn`` into a snapshot; ``SnapshotError`` for a
    failed list (one line naming the kind) or bad objects (every one, as for a file)."""
    builder = SnapshotBuilder(plugin_kinds, keep_raw_objects, check_duplicates=False)
    saver = ListWriter(save) if save is not None else None
    result = LiveSnapshot(ClusterSnapshot())
    loop = asyncio.new_event_loop()
    started = loop.time()
    try:
        with gc_paused():
            loop.run_until_complete(_list_all(conn, kinds, source, builder, edits, saver, progress, result))
            if edits is not None:
                for where, edited in edits.rest():
                    builder.add(where, edited.obj, edited.document, edited.item)
            snapshot = builder.finish()
    finally:
        result.seconds = loop.time() - started
        loop.close()
        if saver is not None:
            saver.close()
    if builder.problems:
        raise SnapshotError(builder.problems)
    result.snapshot = snapshot
    return result
