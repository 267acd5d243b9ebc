"""Decoding a watch stream: newline-delimited JSON ``WatchEvent`` objects.

The API server's JSON watch encoding writes one ``{"type": ..., "object": ...}`` per line.
Lines are split by hand over the raw chunks rather than with ``StreamReader.readline``,
whose buffer limit (128 KiB) a large node object can exceed.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import NamedTuple

import orjson

from .errors import ApiError

__all__ = ["WatchEvent", "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "LineSplitter", "iter_lines", "decode_event"]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"
BOOKMARK = "BOOKMARK"
ERROR = "ERROR"


class WatchEvent(NamedTuple):
    """One watch event: its type, the raw object (a ``Status`` for ERROR) and its encoded size
    (a tuple: one is made per event, a frozen dataclass sets each field the slow way)."""

    type: str
    object: dict[str, object]
    raw_size: int


class LineSplitter:
    """Complete non-empty lines out of a stream's chunks, fed one chunk at a time (a plain
    call per chunk, so a watch's events pass through no extra generator). A partial line is
    kept as a list of chunks and joined once, so an object spread over many chunks costs
    linear time."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes."""
        end = chunk.find(b"\n")
        if end < 0:
            if chunk:
                self._parts.append(chunk)
            return []
        parts = self._parts
        if parts:
            parts.append(chunk)
            data = b"".join(parts)
            parts.clear()
            end = data.find(b"\n")
        else:
            data = chunk
        lines = []
        start = 0
        while end >= 0:
            if end > start:
                lines.append(data[start:end])
            start = end + 1
            end = data.find(b"\n", start)
        if start < len(data):
            parts.append(data[start:])
        return lines

    def tail(self) -> bytes | None:
        """A last line without its newline, once the stream has ended (None if blank)."""
        tail = b"".join(self._parts)
        self._parts.clear()
        return tail if tail.strip() else None


async def iter_lines(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    """Complete non-empty lines of ``chunks``; a trailing line without newline is yielded at the end."""
    splitter = LineSplitter()
    async for chunk in chunks:
        for line in splitter.feed(chunk):
            yield line
    tail = splitter.tail()
    if tail is not None:
        yield tail


def decode_event(line: bytes) -> WatchEvent:
    """A ``WatchEvent`` from one line; an undecodable line is an ``ApiError`` (the stream is broken)."""
    try:
        decoded = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ApiError(0, "BadWatchEvent", f"undecodable watch event: {exc}") from None
    if not isinstance(decoded, dict):
        raise ApiError(0, "BadWatchEvent", "watch event is not an object")
    kind = decoded.get("type")
    obj = decoded.get("object")
    if not isinstance(kind, str) or not isinstance(obj, dict):
        raise ApiError(0, "BadWatchEvent", "watch event without type or object")
    return WatchEvent(kind, obj, len(line))
