"""The items of a JSON ``List``, one at a time, without holding the whole document.

``kubectl get ... -o json`` of a large cluster is one object whose ``items`` array
holds every node and pod: gigabytes of text that, parsed at once, become several
times their size in Python objects before the first one is compiled. This module
finds where each item begins and ends (a structural scan with NumPy over chunks of
the stream, tracking strings, escapes and nesting as a JSON parser's first stage
does) and hands each item's bytes to orjson on its own, so memory follows one item,
not the document.

Only a top-level object with an ``items`` array is split; anything else (one object,
a top-level array, text that is not JSON) is parsed whole, so that errors come from
orjson with its own positions.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import orjson

__all__ = ["JSONListReader", "ListError", "NotAList"]

CHUNK = 1 << 23  # bytes scanned per NumPy pass: 8 MiB keeps the temporaries small

_QUOTE, _BACKSLASH = 0x22, 0x5C
_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[[ord("{"), ord("[")]] = 1
_DELTA[[ord("}"), ord("]")]] = -1
_ITEMS_KEY = b'"items"'
_SPACE = b" \t\r\n"
# After the items array's '[': a newline and the indentation of a first item (pretty-printed JSON).
_PRETTY = re.compile(rb"[ \t\r]*\n([ \t]*)\{")
_GAP = re.compile(rb"[ \t\r\n]*(,)?[ \t\r\n]*")


class NotAList(Exception):
    """The document is not an object with an ``items`` array; ``text`` is all of it."""

    def __init__(self, text: bytes) -> None:
        super().__init__("not a JSON List")
        self.text = text


class ListError(ValueError):
    """The document is a List but not valid JSON; ``str()`` says where, by item."""


@dataclass(slots=True)
class _Scan:
    """Where the scan stands between chunks."""

    in_string: bool = False
    backslashes: int = 0  # the run of backslashes that ended the previous chunk
    depth: int = 0
    phase: int = 0  # 0: before the items array, 1: inside it, 2: after it
    count: int = 0  # items yielded
    head: bytearray = field(default_factory=bytearray)  # the document outside the items array


class JSONListReader:
    """``for item in reader.items(): ...`` then ``reader.header()``: the document's other keys.

    Raises ``NotAList`` (carrying the whole text) when the document is not a List, before
    any item is yielded, and ``ListError`` when it is a List that is not valid JSON.

    Pretty-printed JSON (what kubectl writes) takes a fast path: an item ends at the first
    line holding only its closing brace at the item's indentation, since a JSON string
    cannot hold a raw newline; orjson accepting the item is the proof that the cut was
    right. Anything else (compact JSON, odd indentation) goes through the structural scan.
    """

    def __init__(self, stream: BinaryIO, chunk_size: int = CHUNK) -> None:
        self._stream = stream
        self._chunk_size = chunk_size
        self._scan = _Scan()

    def header(self) -> dict[str, object]:
        """The top-level object with an empty ``items`` (``kind``, ``apiVersion``, ``metadata``)."""
        try:
            head = orjson.loads(bytes(self._scan.head))
        except orjson.JSONDecodeError as err:
            raise ListError(f"invalid JSON outside the items array: {err}") from None
        if not isinstance(head, dict):
            raise ListError("invalid JSON: not an object")
        return head

    def prefix_header(self) -> dict[str, object]:
        """The keys that precede ``items`` (the API server writes ``kind`` first), once the
        first item has been read; ``{}`` when they cannot be read on their own."""
        try:
            head = orjson.loads(bytes(self._scan.head) + b"]}")
        except orjson.JSONDecodeError:
            return {}
        return head if isinstance(head, dict) else {}

    def items(self) -> Iterator[object]:
        """Each element of ``items``, parsed, in order."""
        rest = self._head()
        if len(rest) < 4096:  # enough to see how the first item is laid out
            rest += self._read()
        indent = _PRETTY.match(rest)
        if indent is not None:
            rest = yield from self._lines(rest, indent.group(1))
        if self._scan.phase == 1:
            yield from self._scanned(rest)

    def _read(self) -> bytes:
        return self._stream.read(self._chunk_size)

    def _head(self) -> bytes:
        """Scan up to the ``[`` of ``items``; return what follows it (not scanned yet)."""
        scan = self._scan
        buf = b""
        while True:
            chunk = self._read()
            if not chunk:
                raise NotAList(buf)
            start = len(buf)
            buf += chunk
            positions, deltas = self._structural(np.frombuffer(buf, dtype=np.uint8)[start:])
            levels = scan.depth + np.cumsum(deltas, dtype=np.int64)
            keep = levels <= 2
            for pos, level, delta in zip((positions[keep] + start).tolist(), levels[keep].tolist(),
                                         deltas[keep].tolist()):
                if delta == 1 and level == 2 and buf[pos] == 0x5B and _after_items_key(buf, pos):
                    scan.phase, scan.depth, scan.in_string, scan.backslashes = 1, 2, False, 0
                    scan.head += buf[:pos + 1]
                    return buf[pos + 1:]
                if level == 0:  # the document ended without an items array
                    raise NotAList(buf + self._stream.read())
            if len(levels):
                scan.depth = int(levels[-1])

    def _lines(self, buf: bytes, indent: bytes) -> Generator[object, None, bytes]:
        """The fast path for pretty-printed items; returns where the scan must take over
        (unscanned, at an item or the gap before one), or nothing when the array is done."""
        scan = self._scan
        closing = b"\n" + indent + b"}"
        between = b",\n" + indent + b"{"  # what kubectl writes between two items
        pos = 0
        eof = False
        view = memoryview(buf)
        while True:
            if scan.count and buf.startswith(between, pos):
                item = pos + len(between) - 1
            else:
                gap = _GAP.match(buf, pos)
                assert gap is not None  # the pattern matches the empty string
                if gap.end() == len(buf) and not eof:  # the gap may continue in the next chunk
                    chunk = self._read()
                    buf, pos, eof = buf[pos:] + chunk, 0, not chunk
                    view = memoryview(buf)
                    continue
                following = buf[gap.end():gap.end() + 1]
                if following == b"]" and gap.group(1) is None:
                    scan.phase = 2
                    scan.head += buf[gap.end():]
                    scan.head += self._stream.read()
                    return b""
                if following != b"{" or (gap.group(1) is not None) != (scan.count > 0):
                    return buf[pos:]  # let the scan say what is wrong
                item = gap.end()
            end = buf.find(closing, item)
            while end < 0 and not eof:
                chunk = self._read()
                buf, item, pos, eof = buf[pos:] + chunk, item - pos, 0, not chunk
                view = memoryview(buf)
                end = buf.find(closing, item)
            if end < 0:
                return buf[pos:]
            end += len(closing)
            try:
                value = orjson.loads(view[item:end])
            except orjson.JSONDecodeError:
                return buf[pos:]  # not where the item ends after all: scan it
            yield value
            scan.count += 1
            pos = end

    def _scanned(self, buf: bytes) -> Iterator[object]:
        """Items through the structural scan, from ``buf`` (unscanned) and the rest of the stream."""
        carry = b""
        if buf:
            carry = yield from self._chunk(buf, 0)
        while True:
            chunk = self._read()
            if not chunk:
                break
            carry = yield from self._chunk(carry + chunk, len(carry))
        if self._scan.phase == 1:
            raise ListError(f"invalid JSON: the data ends inside items[{self._scan.count}]")

    def _chunk(self, buf: bytes, start: int) -> Generator[object, None, bytes]:
        """Scan ``buf[start:]`` (what precedes it was scanned with the previous chunk), yield
        the items that end in it, and return what the next chunk must be appended to."""
        scan = self._scan
        positions, deltas = self._structural(np.frombuffer(buf, dtype=np.uint8)[start:])
        levels = scan.depth + np.cumsum(deltas, dtype=np.int64)
        if len(levels):
            scan.depth = int(levels[-1])
        # Only openings of items, closings back to the array, and the array's end matter.
        keep = (levels <= 2) | ((levels == 3) & (deltas == 1))
        mark = 0  # where the item or the gap in progress begins
        for pos, level, delta in zip((positions[keep] + start).tolist(), levels[keep].tolist(),
                                     deltas[keep].tolist()):
            if scan.phase == 2:
                break
            if level == 3:  # an item opens
                if buf[pos] != 0x7B:
                    raise ListError(f"invalid JSON: items[{scan.count}] must be an object")
                self._check_gap(buf[mark:pos], b"," if scan.count else b"")
                mark = pos
            elif level == 2 and delta == -1:  # it closes
                try:
                    yield orjson.loads(memoryview(buf)[mark:pos + 1])
                except orjson.JSONDecodeError as err:
                    raise ListError(f"invalid JSON in items[{scan.count}]: {err}") from None
                scan.count += 1
                mark = pos + 1
            elif level == 1:  # the items array closes
                self._check_gap(buf[mark:pos], b"")
                scan.phase = 2
                mark = pos
            else:
                raise ListError(f"invalid JSON: items[{scan.count}] must be an object")
        if scan.phase == 1:
            return buf[mark:]
        scan.head += buf[mark:]
        return b""

    def _check_gap(self, gap: bytes, expected: bytes) -> None:
        if gap.translate(None, _SPACE) != expected:
            raise ListError(f"invalid JSON before items[{self._scan.count}]: expected {expected.decode() or 'nothing'} "
                            f"between items, found {gap.strip().decode(errors='replace')[:40]!r}")

    def _structural(self, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions (in ``data``) of the braces and brackets outside strings, and +1/-1 for each."""
        scan = self._scan
        quotes = np.flatnonzero(data == _QUOTE)
        if len(quotes):
            quotes = quotes[~self._escaped(data, quotes)]
        # The run of backslashes that ends this data escapes the next chunk's first byte.
        run = 0
        tail = len(data) - 1
        while tail >= 0 and data[tail] == _BACKSLASH:
            run += 1
            tail -= 1
        scan.backslashes = run if tail >= 0 else scan.backslashes + run
        deltas = _DELTA[data]
        positions = np.flatnonzero(deltas)
        outside = (np.searchsorted(quotes, positions) + int(scan.in_string)) % 2 == 0
        scan.in_string = (len(quotes) + int(scan.in_string)) % 2 == 1
        positions = positions[outside]
        return positions, deltas[positions].astype(np.int64)

    def _escaped(self, data: np.ndarray, quotes: np.ndarray) -> np.ndarray:
        """Which quotes are escaped: preceded by an odd run of backslashes (a run that
        begins the data continues the previous chunk's)."""
        escaped = np.zeros(len(quotes), dtype=bool)
        previous = quotes - 1
        candidates = np.flatnonzero((previous < 0) | (data[np.maximum(previous, 0)] == _BACKSLASH))
        for k in candidates.tolist():
            i = int(quotes[k]) - 1
            run = 0
            while i >= 0 and data[i] == _BACKSLASH:
                run += 1
                i -= 1
            if i < 0:
                run += self._scan.backslashes
            escaped[k] = run % 2 == 1
        return escaped


def _after_items_key(buf: bytes, bracket: int) -> bool:
    """Whether the ``[`` at ``bracket`` is the value of the key ``"items"``."""
    i = bracket - 1
    while i >= 0 and buf[i] in _SPACE:
        i -= 1
    if i < 0 or buf[i] != 0x3A:  # ':'
        return False
    i -= 1
    while i >= 0 and buf[i] in _SPACE:
        i -= 1
    return buf[i - len(_ITEMS_KEY) + 1:i + 1] == _ITEMS_KEY
