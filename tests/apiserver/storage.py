"""The object store: one global revision, per-resource objects and an event history.

It stands in for etcd plus the watch cache: every write bumps a single revision
(as etcd's), each object carries that revision as ``metadata.resourceVersion``,
and a bounded event log lets lists be served at an older revision (Exact, and
continue tokens) and watches be resumed. Everything older than ``floor`` is
compacted: reads there get upstream's 410 answers.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

import orjson

from tests.apiserver import errors
from tests.apiserver.managed_fields import stamp
from tests.apiserver.resources import Resource, object_key

JSONDict = dict[str, object]
Listener = Callable[["Event"], None]


_stamp: list[tuple[int, str]] = [(0, "")]


def now_rfc3339() -> str:
    """Timestamps as kube-apiserver writes metav1.Time: second precision, UTC, ``Z`` (cached per second)."""
    second = int(time.time())
    cached = _stamp[0]
    if cached[0] != second:
        cached = (second, datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        _stamp[0] = cached
    return cached[1]


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand's alphanums: no vowels, no look-alikes


def generate_name(base: str) -> str:
    """names.SimpleNameGenerator: the base cut to 58 characters, then five random ones."""
    return base[:58] + "".join(secrets.choice(_NAME_ALPHABET) for _ in range(5))


def meta(obj: JSONDict) -> JSONDict:
    """The object's metadata mapping (created empty if missing)."""
    found = obj.get("metadata")
    if not isinstance(found, dict):
        found = {}
        obj["metadata"] = found
    return found


def clone(obj: JSONDict) -> JSONDict:
    """A deep copy via orjson: stored objects are never shared with callers."""
    loaded = orjson.loads(orjson.dumps(obj))
    assert isinstance(loaded, dict)
    return loaded


@dataclass(slots=True)
class Event:
    """One write as the watch cache records it: the new object and the one it replaced.

    For DELETED, ``obj`` is the deleted object carrying the deletion's revision.
    Serialized frames are cached so every watcher shares the same bytes.
    """

    rev: int
    resource: Resource
    key: str
    type: str
    obj: JSONDict
    prev: JSONDict | None
    _bytes: dict[str, bytes] = field(default_factory=dict)

    def object_bytes(self, which: str = "obj") -> bytes:
        """The event's object (``obj``) or its previous one at this revision (``prev``), with kind."""
        cached = self._bytes.get(which)
        if cached is None:
            source = self.obj if which == "obj" else self.prev
            assert source is not None
            body: JSONDict = {"kind": self.resource.kind, "apiVersion": self.resource.api_version, **source}
            if which == "prev":
                body["metadata"] = {**meta(source), "resourceVersion": str(self.rev)}
            cached = orjson.dumps(body)
            self._bytes[which] = cached
        return cached

    def frame(self, kind: str, which: str = "obj") -> bytes:
        """A newline-terminated watch event ``{"type": kind, "object": ...}``."""
        tag = f"frame:{kind}:{which}"
        cached = self._bytes.get(tag)
        if cached is None:
            cached = b'{"type":"' + kind.encode() + b'","object":' + self.object_bytes(which) + b"}\n"
            self._bytes[tag] = cached
        return cached


@dataclass(slots=True)
class Preconditions:
    uid: str | None = None
    resource_version: str | None = None


def _precondition_failure(resource: Resource, key: str, name: str, what: str, want: str, have: str) -> errors.StatusError:
    # storage.NewInvalidObjError as InterpretUpdateError/InterpretDeleteError turn it into a Conflict.
    why = (f"StorageError: invalid object, Code: 4, Key: /{resource.plural}/{key}, ResourceVersion: 0, "
           f"AdditionalErrorMsg: Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}")
    return errors.conflict(resource, name, why)


class Store:
    """Thread-safe object storage with one revision counter and a bounded event log."""

    def __init__(self, history: int = 100_000) -> None:
        self.lock = threading.RLock()
        self.revision = 1
        self.floor = 1  # the oldest revision the watch cache serves
        self.etcd_floor = 1  # what etcd has compacted up to (the watch cache learns it on restart)
        self.history = history
        self.objects: dict[Resource, dict[str, JSONDict]] = {}
        self.log: deque[Event] = deque()
        self.listeners: list[Listener] = []
        self.changed = threading.Condition(self.lock)
        # The server's alpha feature gates, as its registries read them (workload_resources.py).
        self.feature_gates: frozenset[str] = frozenset()

    # -- reads -----------------------------------------------------------
    def table(self, resource: Resource) -> dict[str, JSONDict]:
        found = self.objects.get(resource)
        if found is None:
            found = {}
            self.objects[resource] = found
        return found

    def get(self, resource: Resource, key: str) -> JSONDict | None:
        with self.lock:
            return self.table(resource).get(key)

    def state_at(self, resource: Resource, rev: int) -> dict[str, JSONDict]:
        """The resource's objects as they were at ``rev`` (undoing newer events); rev >= floor."""
        with self.lock:
            current = self.table(resource)
            if rev >= self.revision:
                return current
            state = dict(current)
            for ev in reversed(self.log):
                if ev.rev <= rev:
                    break
                if ev.resource is not resource:
                    continue
                if ev.type == "ADDED" or ev.prev is None:
                    state.pop(ev.key, None)
                else:
                    state[ev.key] = ev.prev
            return state

    def events_since(self, rev: int) -> list[Event]:
        """Logged events newer than ``rev`` (caller checks ``rev >= floor`` and holds the lock)."""
        out: list[Event] = []
        for ev in reversed(self.log):
            if ev.rev <= rev:
                break
            out.append(ev)
        out.reverse()
        return out

    # -- writes ----------------------------------------------------------
    def _emit(self, resource: Resource, key: str, kind: str, obj: JSONDict, prev: JSONDict | None) -> None:
        ev = Event(self.revision, resource, key, kind, obj, prev)
        self.log.append(ev)
        while len(self.log) > self.history:
            self.floor = self.log.popleft().rev
        for listener in self.listeners:
            listener(ev)
        self.changed.notify_all()

    def _bump(self, obj: JSONDict) -> None:
        self.revision += 1
        meta(obj)["resourceVersion"] = str(self.revision)

    def create(self, resource: Resource, obj: JSONDict) -> JSONDict:
        """Store a new object (fresh dict owned by the store); 409 AlreadyExists if present."""
        with self.lock:
            md = meta(obj)
            if not md.get("name") and md.get("generateName"):
                md["name"] = generate_name(str(md["generateName"]))
            name = str(md.get("name") or "")
            if not name:
                raise errors.invalid(resource.group, resource.kind, "", [
                    ("FieldValueRequired", "metadata.name", "Required value: name or generateName is required")])
            namespace = str(md.get("namespace") or "") or None
            key = object_key(resource, namespace, name)
            table = self.table(resource)
            if key in table:
                raise errors.already_exists(resource, name)
            md.setdefault("uid", str(uuid.uuid4()))
            md.setdefault("creationTimestamp", now_rfc3339())
            if resource.tracks_generation:
                md["generation"] = 1
            if not md.get("managedFields"):
                stamp(obj, resource.api_version, None, now_rfc3339())
            self._bump(obj)
            table[key] = obj
            self._emit(resource, key, "ADDED", obj, None)
            return obj

    def mutate(self, resource: Resource, key: str, name: str,
               change: Callable[[JSONDict], JSONDict],
               pre: Preconditions | None = None, *, strategy: bool = True) -> JSONDict:
        """GuaranteedUpdate: ``change`` gets a private copy of the current object and returns the new one.

        A change that alters nothing writes nothing (no new revision, no event),
        as etcd3's store skips identical bytes. ``strategy=False`` is a raw
        storage write, as BindingREST does: generation is left alone.
        """
        with self.lock:
            table = self.table(resource)
            current = table.get(key)
            if current is None:
                raise errors.not_found(resource, name)
            self._check(resource, key, name, current, pre)
            updated = change(clone(current))
            md = meta(updated)
            old_md = meta(current)
            for kept in ("uid", "creationTimestamp", "name", "namespace"):
                if kept in old_md:
                    md[kept] = old_md[kept]
            md["resourceVersion"] = old_md.get("resourceVersion")
            if resource.tracks_generation:
                generation = old_md.get("generation", 1)
                if strategy and updated.get("spec") != current.get("spec"):
                    generation = int(str(generation)) + 1
                md["generation"] = generation
            if updated == current:
                return current
            stamp(updated, resource.api_version, current, now_rfc3339())
            self._bump(updated)
            table[key] = updated
            self._emit(resource, key, "MODIFIED", updated, current)
            return updated

    def delete(self, resource: Resource, key: str, name: str, pre: Preconditions | None = None) -> JSONDict:
        with self.lock:
            table = self.table(resource)
            current = table.get(key)
            if current is None:
                raise errors.not_found(resource, name)
            self._check(resource, key, name, current, pre)
            del table[key]
            self.revision += 1
            gone = {**current, "metadata": {**meta(current), "resourceVersion": str(self.revision)}}
            self._emit(resource, key, "DELETED", gone, current)
            return gone

    def _check(self, resource: Resource, key: str, name: str, current: JSONDict, pre: Preconditions | None) -> None:
        if pre is None:
            return
        md = meta(current)
        if pre.uid is not None and pre.uid != md.get("uid"):
            raise _precondition_failure(resource, key, name, "UID", pre.uid, str(md.get("uid")))
        if pre.resource_version is not None and pre.resource_version != md.get("resourceVersion"):
            raise _precondition_failure(resource, key, name, "ResourceVersion", pre.resource_version,
                                        str(md.get("resourceVersion")))

    def load(self, items: Iterable[tuple[Resource, JSONDict]]) -> None:
        """Bulk create under one lock hold: for seeding big clusters fast.

        Each object gets its own revision and ADDED event, as if a client had
        created them one by one.
        """
        with self.lock:
            for resource, obj in items:
                self.create(resource, obj)

    def compact(self) -> None:
        """Forget all history: only the current revision can be read or watched from."""
        with self.lock:
            self.log.clear()
            self.floor = self.revision
            self.etcd_floor = self.revision
            self.changed.notify_all()

    def compact_etcd(self) -> None:
        """etcd compacts its history to now; the watch cache keeps serving what it holds
        (old continue tokens, Exact lists, watches from old revisions) until
        ``forget_compacted`` (an API server restart), as a real v1.36 server does."""
        with self.lock:
            self.etcd_floor = self.revision

    def forget_compacted(self) -> None:
        """The watch cache starts again from etcd: what etcd compacted is gone (410)."""
        with self.lock:
            while self.log and self.log[0].rev <= self.etcd_floor:
                self.log.popleft()
            self.floor = max(self.floor, self.etcd_floor)
            self.changed.notify_all()
