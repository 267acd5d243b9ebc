"""The documents of a YAML stream, with Lists parsed item by item.

``kubectl get ... -o yaml`` of a large cluster is one ``List`` of a million items;
parsed at once it becomes several times its size in Python objects. Here the text is
cut at the items of a List (no grammar needed: the items of a top-level block sequence
begin at lines with the sequence's indentation and a ``-``, and nothing inside an item
may begin a line there) and parsed a batch at a time, on worker processes when it is
large (``yaml_parallel``).

The text may be a memory map of the file: it is read as bytes, each batch decoded on its
own, and the pages already parsed are handed back to the kernel, so that the file never
sits in memory whole. Anything that does not look like kubectl's layout (directives,
document end markers, anchors and aliases, which may reach across items) is parsed
whole, and any error is reported from the whole stream, with its line numbers.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Union

import yaml_rs

from .yaml_documents import YAMLError, parse_yaml, yaml_documents
from .yaml_parallel import parallel_workers, parse_in_workers

__all__ = ["Text", "YAMLDocument", "YAMLList", "yaml_stream"]

Text = Union[bytes, mmap.mmap]
BATCH = 256  # items parsed per yaml_rs call
_RELEASE_EVERY = 64 << 20  # bytes parsed between two hand-backs of a memory map's pages

_SEPARATOR = re.compile(rb"---(?:[ \t]|$)", re.M)
_SEPARATOR_WITH_CONTENT = re.compile(rb"---[ \t]+[^ \t\n#]")
# Lines that end a document, hold a directive or may separate documents (a regex with a
# literal first byte runs at the speed of a byte search).
_MARKED_LINES = re.compile(rb"\n(\.\.\.|%|---)")
_CONTENT = re.compile(rb"^[ \t]*[^\s#]", re.M)  # a line that is neither blank nor a comment
_ITEMS_LINE = re.compile(rb"^items:[ \t]*(?:#.*)?$", re.M)
_FIRST_ITEM = re.compile(rb"(?:[ \t]*(?:#.*)?\n)*( *)-(?: |$)", re.M)
# An anchor or an alias begins a value: items could then refer to each other.
_ANCHOR_MARKS = (b"&", b"*")
_VALUE_STARTS = (b": ", b"- ")


@dataclass(slots=True)
class YAMLList:
    """A document that is a List: its other keys, parsed, and its items, parsed in batches."""

    header: object
    _text: Text
    _starts: list[int]  # where each item begins in ``_text``; the last entry is where the items end
    _whole: Callable[[], object]  # the whole document, parsed from the whole stream: the fallback

    def __len__(self) -> int:
        return len(self._starts) - 1

    def items(self) -> Iterator[object]:
        """Each item, in order; parsed ``BATCH`` at a time so that memory follows a batch,
        by worker processes when the List is large."""
        count = len(self)
        bounds = [(first, min(first + BATCH, count)) for first in range(0, count, BATCH)]
        spans = [(self._starts[first], self._starts[last]) for first, last in bounds]
        workers = parallel_workers(self._starts[-1] - self._starts[0])
        results: Iterator[list[object] | None] = (
            parse_in_workers(self._text, spans, workers) if workers else (None for _ in bounds))
        released = 0
        for (first, last), (start, end), found in zip(bounds, spans, results):
            parsed: object = found
            if parsed is None:
                try:
                    parsed = yaml_rs.loads(_decode(self._text, start, end), parse_datetime=False)
                except (yaml_rs.YAMLDecodeError, YAMLError):
                    parsed = None
            if not isinstance(parsed, list) or len(parsed) != last - first:
                # Cut where the grammar does not allow it after all: the whole stream says
                # what the document holds (or where it is wrong, with its line numbers).
                whole = self._whole()
                items = whole.get("items") if isinstance(whole, dict) else None
                if not isinstance(items, list):
                    raise YAMLError("invalid YAML: the items of a List could not be read")
                yield from items[first:]
                return
            yield from parsed
            if end - released >= _RELEASE_EVERY:
                released = release(self._text, released, end)


YAMLDocument = Union[YAMLList, object]


def release(text: Text, start: int, end: int) -> int:
    """Hand the pages of ``text[start:end]`` back to the kernel when it is a memory map (they
    are read again from the page cache if needed); returns where the next release starts."""
    if not isinstance(text, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):  # Windows has no madvise
        return end
    first = start - start % mmap.PAGESIZE
    last = end - end % mmap.PAGESIZE
    if last > first:
        text.madvise(mmap.MADV_DONTNEED, first, last - first)
    return last


def _decode(text: Text, start: int, end: int) -> str:
    try:
        return text[start:end].decode("utf-8")
    except UnicodeDecodeError as err:
        raise YAMLError(f"not UTF-8 text (byte {start + err.start})") from None


def _whole(text: Text) -> list[object]:
    return yaml_documents(text[:])


def yaml_stream(text: Text) -> list[YAMLDocument]:
    """The documents of ``text``; those that are Lists come as ``YAMLList`` (items parsed on
    demand, in batches), the others parsed. Raises ``YAMLError`` as ``yaml_documents`` does."""
    bounds = _separators(text)
    if bounds is None:
        return _whole(text)
    out: list[YAMLDocument] = []
    separators = set(bounds)
    try:
        for start, end in zip([0, *bounds], [*bounds, len(text)]):
            if start in separators:
                newline = text.find(b"\n", start, end)
                start = end if newline < 0 else newline + 1
            if _CONTENT.search(text, start, end) is None:
                if not (start == 0 and bounds):  # what precedes the first separator is no document
                    out.append(None)
                continue
            out.append(_document(text, start, end, partial(_nth_document, text, len(out))))
    except YAMLError:
        return _whole(text)  # raises with the stream's line numbers
    return out


def _nth_document(text: Text, index: int) -> object:
    return _whole(text)[index]


def _document(text: Text, start: int, end: int, whole: Callable[[], object]) -> YAMLDocument:
    found = _ITEMS_LINE.search(text, start, end)
    if found is None:
        return parse_yaml(_decode(text, start, end))
    first = _FIRST_ITEM.match(text, found.end() + 1, end)
    if first is None:
        return parse_yaml(_decode(text, start, end))
    indent = len(first.group(1))
    starts = _item_starts(text, first.start(1), end, indent)
    # The items end at the first line after the last item's first, not blank and not a
    # comment, indented less than them (at indentation 0: a line that does not start an
    # item). A line like that between items makes its batch fail to parse as a sequence,
    # and the document is then parsed whole.
    ending = re.compile(rb"^(?=[^ \t\n#-]|-[^ \n])" if indent == 0 else rb"^ {0,%d}(?=[^ \t\n#])" % (indent - 1), re.M)
    stop = ending.search(text, starts[-1] + 1, end)
    items_end = stop.start() if stop is not None else end
    header = parse_yaml(_decode(text, start, found.start()) + "items: []\n" + _decode(text, items_end, end))
    if not isinstance(header, dict):
        return parse_yaml(_decode(text, start, end))
    return YAMLList(header, text, [*starts, items_end], whole)


def _separators(text: Text) -> list[int] | None:
    """Where the document separators begin; None when the stream must be read whole
    (document end markers, directives, anchors or aliases, CRLF line ends, content on a
    separator's line). One pass, window by window, handing back each window's pages."""
    if b"\r" in text[:4096]:
        return None
    bounds: list[int] = []
    start = 0
    while start < len(text):
        end = text.find(b"\n", min(start + _RELEASE_EVERY, len(text)))
        end = len(text) if end < 0 else end + 1
        window = text[start:end]  # one window in memory at a time
        if _has_anchor(window):
            return None
        # Each window begins a line (windows end at a newline), so its first line is checked too.
        marked = [0] if window.startswith((b"...", b"%", b"---")) else []
        marked += [found.start() + 1 for found in _MARKED_LINES.finditer(window)]
        for at in marked:
            if not window.startswith(b"---", at) or _SEPARATOR_WITH_CONTENT.match(window, at):
                return None  # a document end marker, a directive, content on a separator's line
            if _SEPARATOR.match(window, at):
                bounds.append(start + at)
        release(text, start, end)
        start = end
    return bounds


def _has_anchor(text: bytes) -> bool:
    """Whether a value begins with ``&`` or ``*`` (both rare, so searched for first: ``": "``
    is everywhere in YAML and slows a search for ``": *"`` down)."""
    for mark in _ANCHOR_MARKS:
        at = text.find(mark)
        while at >= 0:
            if text[at - 2:at] in _VALUE_STARTS:
                return True
            at = text.find(mark, at + 1)
    return False


def _item_starts(text: Text, first: int, end: int, indent: int) -> list[int]:
    """Where the lines ``{indent spaces}- `` (or a bare ``-``) begin, from ``first`` on; the
    pages searched are handed back as the search goes."""
    marker = b"\n" + b" " * indent + b"-"
    starts = [first]
    released = first
    at = text.find(marker, first, end)
    while at >= 0:
        after = text[at + len(marker):at + len(marker) + 1]
        if after in (b" ", b"\n", b""):
            starts.append(at + 1)
        if at - released >= _RELEASE_EVERY:
            released = release(text, released, at)
        at = text.find(marker, at + len(marker), end)
    return starts
