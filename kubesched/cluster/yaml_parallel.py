"""Parsing batches of YAML items on the machine's other cores.

YAML parses about four times slower than the same dump as JSON, even in Rust, and the
loader's own work (compiling objects, filling the cache) runs on one core. A large List
is therefore parsed by forked worker processes, batch by batch, ahead of the loader: a
worker (which shares the text with the loader) turns each batch into JSON text, which
the loader decodes at JSON's speed. A bounded number of batches is in flight, so
memory stays flat.

A batch comes back as None when JSON might not carry it exactly (keys that are not
strings, integers beyond 64 bits, or an infinity or NaN, which JSON would turn into
null): the loader then parses that batch itself.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

import orjson
import yaml_rs

__all__ = ["batch_as_json", "parallel_workers", "parse_in_workers"]

MIN_TEXT = 16 << 20  # below this much YAML, starting a worker costs more than it saves
_STOLEN_AT_ONCE = 6  # batches the loader parsed itself that may wait their turn at once


def _exact(text: str, data: bytes) -> bool:
    """Whether ``data`` (orjson's text of what ``text`` parsed to) holds it exactly.

    orjson writes an infinity or a NaN as null, so a batch is exact when its JSON has no
    more nulls than the YAML wrote, as kubectl writes them (``: null`` at a line's end).
    Nulls written otherwise (``~``, an empty value), the word inside a string, or comments
    (which could hold the pattern) make the counts differ or the check give up: the loader
    then parses the batch itself, which is only slower."""
    if b"null" not in data:
        return True
    if "#" in text:
        return False
    return data.count(b"null") == text.count(": null\n") + text.count("- null\n")


_text: bytes | mmap.mmap = b""  # the stream being parsed (UTF-8); a forked worker inherits it


def parallel_workers(text_size: int) -> int:
    """How many worker processes to parse ``text_size`` characters of YAML with (0: none).

    Workers are forked, so that they share the text without copying it. A fork copies the
    state of other threads' locks too (``simulate``'s progress display runs a timer and a
    refresh thread); the worker touches none of them: it runs the YAML parser, orjson and
    the executor's queues, which the executor creates for it."""
    if text_size < MIN_TEXT or os.environ.get("KUBESCHED_YAML_WORKERS") == "0":
        return 0
    if "fork" not in multiprocessing.get_all_start_methods():
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(0, min(cpus - 1, 3))


def batch_as_json(start: int, end: int) -> bytes | None:
    """``_text[start:end]`` (a block sequence in UTF-8) as the JSON text of its list, or None when it
    does not parse to a list or JSON might not hold it exactly. Runs in a worker."""
    try:
        text = _text[start:end].decode("utf-8")
    except UnicodeDecodeError:  # the loader reports where
        return None
    try:
        parsed = yaml_rs.loads(text, parse_datetime=False)
    except yaml_rs.YAMLDecodeError:
        return None
    if not isinstance(parsed, list):
        return None
    try:
        data = orjson.dumps(parsed)
    except TypeError:  # a key that is not a string, an integer beyond 64 bits, bytes
        return None
    return data if _exact(text, data) else None


def parse_in_workers(text: bytes | mmap.mmap, spans: Sequence[tuple[int, int]], workers: int,
                     ahead: int = 24) -> Iterator[list[object] | None]:
    """Each span of ``text`` parsed (None: parse it yourself), in order, by ``workers``
    forked processes that keep up to ``ahead`` batches each in flight.

    The loader shares the work when the workers fall behind: when the batch it needs next
    is not parsed yet, it takes the last batch handed out that no worker has started and
    parses it itself meanwhile, so it never idles while there is parsing to do, whatever
    the machine's load and the objects' size."""
    global _text
    _text = text
    # In order: a worker's future, or what the loader parsed itself (None: it failed to).
    pending: deque[tuple[tuple[int, int], Future[bytes | None] | list[object] | None]] = deque()
    source = iter(spans)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            try:
                with warnings.catch_warnings():  # the workers start here (see parallel_workers)
                    warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
                    for span in source:
                        pending.append((span, pool.submit(batch_as_json, *span)))
                        if len(pending) >= workers * ahead:
                            break
                while pending:
                    head = pending[0][1]
                    if isinstance(head, Future) and not head.done() and _steal(pending):
                        continue
                    _, entry = pending.popleft()
                    following = next(source, None)
                    if following is not None:
                        pending.append((following, pool.submit(batch_as_json, *following)))
                    if isinstance(entry, Future):
                        data = entry.result()
                        parsed = orjson.loads(data) if data is not None else None
                        yield parsed if isinstance(parsed, list) else None
                    else:
                        yield entry
            finally:
                for _, waiting in pending:
                    if isinstance(waiting, Future):
                        waiting.cancel()
    finally:
        _text = b""


def _steal(pending: deque[tuple[tuple[int, int], Future[bytes | None] | list[object] | None]]) -> bool:
    """Parse here the last batch no worker has started; False when there is none, or when
    batches parsed here already wait their turn (parsed objects weigh ten times their JSON)."""
    if sum(not isinstance(entry, Future) for _, entry in pending) >= _STOLEN_AT_ONCE:
        return False
    for index in range(len(pending) - 1, 0, -1):
        span, entry = pending[index]
        if isinstance(entry, Future) and entry.cancel():
            pending[index] = (span, _parse_here(*span))
            return True
    return False


def _parse_here(start: int, end: int) -> list[object] | None:
    try:
        parsed: object = yaml_rs.loads(_text[start:end].decode("utf-8"), parse_datetime=False)
    except (yaml_rs.YAMLDecodeError, UnicodeDecodeError):
        return None  # the caller parses it again and reports where
    return list(parsed) if isinstance(parsed, list) else None
