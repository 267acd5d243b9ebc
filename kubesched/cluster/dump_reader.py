"""The objects of a dump file, one at a time: documents, and the items of Lists.

A dump of a large cluster is one ``List`` of a million objects; reading it whole
costs several times its size in memory before anything is compiled. Here a JSON List
is read item by item from the stream (``json_items``) and a YAML List parsed in
batches of items (``yaml_lists.yaml_stream``), so that the loader compiles each
object and lets its document go.

Items of a typed list (``PodList``) without a ``kind`` take the list's; the list's
kind is known before its items when it precedes them (what the API server writes);
otherwise such items wait for the end of the list.
"""

from __future__ import annotations

import io
import mmap
import sys
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from .json_items import JSONListReader, ListError, NotAList
from .yaml_documents import YAMLError
from .yaml_lists import Text, YAMLList, yaml_stream

__all__ = ["DumpObject", "ReadProblem", "STDIN", "STDIN_NAME", "read_dump"]

STDIN = "-"  # a dump path that means standard input
STDIN_NAME = "<stdin>"  # what problems call it


@dataclass(slots=True)
class DumpObject:
    """One object and where it was: document ``document`` (from 1), item ``item`` of its List."""

    obj: Mapping[str, Any]
    document: int
    item: int | None = None

    @property
    def where(self) -> str:
        return f"document {self.document}" if self.item is None else f"document {self.document}, items[{self.item}]"


@dataclass(slots=True)
class ReadProblem:
    """A document that could not be read, or is not an object; ``where`` as in ``DumpObject``."""

    where: str
    obj: str
    field: str
    message: str


def read_dump(path: Path, problems: list[ReadProblem]) -> Iterator[DumpObject]:
    """Every object of one file (or of standard input for ``-``), in order."""
    try:
        stream: BinaryIO = sys.stdin.buffer if str(path) == STDIN else open(path, "rb")
    except OSError as err:
        problems.append(ReadProblem("", "", "", err.strerror or str(err)))
        return
    with stream:
        try:
            first = stream.peek(64)[:64] if hasattr(stream, "peek") else b""
        except OSError as err:
            problems.append(ReadProblem("", "", "", err.strerror or str(err)))
            return
        text: Text | None = None
        if path.suffix == ".json" or first.lstrip()[:1] in (b"{", b"["):
            text = yield from _json(stream, problems, strict=path.suffix == ".json")
            if text is None:
                return
        else:
            text = _mapped(stream)  # a file is read through a memory map, never whole
            if text is None:
                text = stream.read()
        documents: list[object] = []
        try:
            try:
                documents = yaml_stream(text)
            except YAMLError as err:
                problems.append(ReadProblem("", "", "", str(err)))
                return
            for index, document in enumerate(documents, start=1):
                if isinstance(document, YAMLList):
                    yield from _list_items(document.header, document.items(), index, problems)
                elif document is not None:
                    yield from _document(document, index, problems)
        except YAMLError as err:  # a batch of items that does not parse: the whole stream said where
            problems.append(ReadProblem("", "", "", str(err)))
        finally:
            del documents
            if isinstance(text, mmap.mmap):
                text.close()


def _mapped(stream: BinaryIO) -> mmap.mmap | None:
    """A read-only memory map of the file behind ``stream``; None for a pipe or an empty file."""
    try:
        return mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


def _json(stream: BinaryIO, problems: list[ReadProblem], strict: bool) -> Generator[DumpObject, None, bytes | None]:
    """The objects of a JSON stream; returns None when done, or the text to read as YAML
    (a file not named ``.json`` that turned out not to be JSON)."""
    reader = JSONListReader(stream)
    try:
        yield from _list_items(None, reader.items(), 1, problems, reader)
        return None
    except ListError as err:
        problems.append(ReadProblem("", "", "", str(err)))
        return None
    except NotAList as whole:
        text = whole.text
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as err:
        if strict:
            problems.append(ReadProblem("", "", "", f"invalid JSON: {err}"))
            return None
        return text  # YAML that starts with a brace
    yield from _document(document, 1, problems)
    return None


def _list_items(header: object, items: Iterator[object], index: int, problems: list[ReadProblem],
                reader: JSONListReader | None = None) -> Iterator[DumpObject]:
    """A List's items; ``header`` is its other keys when known before them, ``reader`` gives
    them after (a JSON List whose ``kind`` follows ``items``)."""
    head: Mapping[str, Any] = header if isinstance(header, Mapping) else {}
    waiting: list[tuple[int, Mapping[str, Any]]] = []  # kindless items of a list whose kind comes later
    for j, item in enumerate(items):
        if type(item) is dict and type(item.get("kind")) is str and item["kind"]:
            yield DumpObject(item, index, j)  # the usual item: an object with its own kind
            continue
        if not isinstance(item, Mapping):
            problems.append(ReadProblem(f"document {index}, items[{j}]", f"{head.get('kind', 'List')} "
                                        f"(document {index}, items[{j}])", "", "must be an object"))
            continue
        if not item.get("kind") and not isinstance(head.get("kind"), str):
            if reader is not None and not head:
                head = reader.prefix_header()  # read by now: the first item follows it
            if not isinstance(head.get("kind"), str):
                waiting.append((j, item))
                continue
        found = _item(head, item, index, j, problems)
        if found is not None:
            yield found
    if reader is not None:
        head = reader.header()
    for j, item in waiting:
        found = _item(head, item, index, j, problems)
        if found is not None:
            yield found


def _item(head: Mapping[str, Any], item: Mapping[str, Any], index: int, j: int,
          problems: list[ReadProblem]) -> DumpObject | None:
    kind = head.get("kind")
    if not item.get("kind") and isinstance(kind, str) and kind.endswith("List") and kind != "List":
        item = {**item, "kind": kind[: -len("List")]}
        if not item.get("apiVersion") and head.get("apiVersion"):
            item["apiVersion"] = head["apiVersion"]
    if not isinstance(item.get("kind"), str) or not item.get("kind"):
        where = f"document {index}, items[{j}]"
        problems.append(ReadProblem(where, describe(item, where), "kind", "is required"))
        return None
    return DumpObject(item, index, j)


def _document(doc: object, index: int, problems: list[ReadProblem]) -> Iterator[DumpObject]:
    """An object, or a List given whole (a small JSON document, a List that is not a block sequence)."""
    if not isinstance(doc, Mapping):
        problems.append(ReadProblem(f"document {index}", f"document {index}", "", "must be a Kubernetes object or List"))
        return
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            problems.append(ReadProblem(f"document {index}", f"{kind} (document {index})", "items", "must be a list"))
            return
        yield from _list_items({k: v for k, v in doc.items() if k != "items"}, iter(items), index, problems)
        return
    if not isinstance(kind, str) or not kind:
        problems.append(ReadProblem(f"document {index}", describe(doc, f"document {index}"), "kind", "is required"))
        return
    yield DumpObject(doc, index)


def describe(obj: Mapping[str, Any], where: str | None = None) -> str:
    """``Pod default/web-1``, with ``(where)`` when given."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = meta.get("name", "<unnamed>") if isinstance(meta, Mapping) else "<unnamed>"
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    kind = obj.get("kind") or "object"
    text = f"{kind} {ns}/{name}" if ns else f"{kind} {name}"
    return f"{text} ({where})" if where else text
