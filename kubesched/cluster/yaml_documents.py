"""The documents of a YAML stream, parsed fast.

Cluster dumps are big (``kubectl get ... -o yaml`` of a 5,000-node cluster is hundreds
of megabytes), and PyYAML, even with libyaml, builds every scalar in Python: 50 times
slower than the same dump as JSON. ``yaml_rs`` (Rust) parses it about 3 times slower
than JSON instead.

Its schema is YAML 1.2 core, while Kubernetes' own YAML (sigs.k8s.io/yaml) is YAML 1.1.
For what kubectl writes the two agree: kubectl quotes every string that YAML 1.1 would
read as something else (``"yes"``, ``"on"``, ``"0755"``). Hand-written files differ only
in those unquoted forms: ``yes``/``no``/``on``/``off`` stay strings and ``0755`` is 755.
Timestamps stay strings, as in JSON; duplicate keys are an error, as kubectl makes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Union

import yaml_rs

from .yaml_parallel import parallel_workers, parse_in_workers

__all__ = ["YAMLError", "YAMLList", "yaml_documents", "yaml_stream"]

_SEPARATOR = re.compile(r"^---(?:[ \t]|$)", re.M)
_POSITION = re.compile(r"at line (\d+), column (\d+)")


class YAMLError(ValueError):
    """Not YAML; ``str()`` is one line: where, and what is wrong."""


def _decode(text: bytes) -> str:
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as err:
        raise YAMLError(f"not UTF-8 text (byte {err.start})") from None


def _several_documents(text: str) -> bool:
    """Whether the stream holds more than one document (``yaml_rs`` then returns a list of
    them, which a single document that is a list would look like too)."""
    separators = [m.start() for m in _SEPARATOR.finditer(text)]
    if not separators:
        return False
    if len(separators) > 1:
        return True
    before = text[: separators[0]]
    return any(line.strip() and not line.lstrip().startswith(("#", "%")) for line in before.splitlines())


def yaml_documents(text: bytes) -> list[object]:
    """Every document of ``text``, empty ones included as None."""
    return _whole_stream(_decode(text))


def _whole_stream(decoded: str) -> list[object]:
    parsed = _parse(decoded)
    if isinstance(parsed, list) and _several_documents(decoded):
        return list(parsed)
    return [parsed]


@dataclass(slots=True)
class YAMLList:
    """A document that is a List: its other keys, parsed, and its items' text, parsed in batches."""

    header: object
    _text: str
    _starts: list[int]  # where each item begins in ``_text``; the last entry is where the items end
    _whole: Callable[[], object]  # the whole document, parsed from the whole stream: the fallback

    def __len__(self) -> int:
        return len(self._starts) - 1

    def items(self) -> Iterator[object]:
        """Each item, in order; parsed ``BATCH`` at a time so that memory follows a batch,
        by worker processes when the List is large (``yaml_parallel``)."""
        count = len(self)
        bounds = [(first, min(first + BATCH, count)) for first in range(0, count, BATCH)]
        workers = parallel_workers(self._starts[-1] - self._starts[0])
        spans = [(self._starts[first], self._starts[last]) for first, last in bounds]
        results: Iterator[list[object] | None] = (
            parse_in_workers(self._text, spans, workers) if workers else (None for _ in bounds))
        for (first, last), found in zip(bounds, results):
            parsed: object = found
            if parsed is None:
                try:
                    parsed = yaml_rs.loads(self._text[self._starts[first]:self._starts[last]], parse_datetime=False)
                except yaml_rs.YAMLDecodeError:
                    parsed = None
            if not isinstance(parsed, list) or len(parsed) != last - first:
                # Split where the grammar does not allow it after all: the whole document says
                # what it holds (or where it is wrong, with the right line numbers).
                whole = self._whole()
                items = whole.get("items") if isinstance(whole, dict) else None
                if not isinstance(items, list):
                    raise YAMLError("invalid YAML: the items of a List could not be read")
                yield from items[first:]
                return
            yield from parsed


YAMLDocument = Union[YAMLList, object]
BATCH = 1024  # items parsed per yaml_rs call
_ITEMS_LINE = re.compile(r"^items:[ \t]*(?:#.*)?$", re.M)
_FIRST_ITEM = re.compile(r"^(?:[ \t]*(?:#.*)?\n)*( *)-(?: |$)", re.M)
_CONTENT = re.compile(r"^[ \t]*[^\s#]", re.M)  # a line that is neither blank nor a comment
_SEPARATOR_WITH_CONTENT = re.compile(r"---[ \t]+[^ \t\n#]")


def yaml_stream(text: bytes) -> list[YAMLDocument]:
    """The documents of ``text``; those that are Lists come as ``YAMLList`` (items parsed on
    demand, in batches), the others parsed. Raises ``YAMLError`` as ``yaml_documents`` does.

    Parsing a List item by item needs no grammar of its own: items of a block sequence at
    the top level start at a line with the sequence's indentation and ``-``, and nothing
    inside an item may start a line at that indentation. Whatever does not look like that
    is parsed whole; any error is reported from the whole stream, with its line numbers.
    """
    decoded = _decode(text)
    if _lines_starting(decoded, "...") or _lines_starting(decoded, "%"):
        return _whole_stream(decoded)  # document ends and directives: read the stream whole
    bounds = [at for at in _lines_starting(decoded, "---") if _SEPARATOR.match(decoded, at)]
    if any(_SEPARATOR_WITH_CONTENT.match(decoded, at) for at in bounds):
        return _whole_stream(decoded)
    out: list[YAMLDocument] = []
    try:
        for start, end in zip([0, *bounds], [*bounds, len(decoded)]):
            body = decoded[start:end]
            if start in bounds:
                body = body.partition("\n")[2]
            if _CONTENT.search(body) is None:
                if not (start == 0 and bounds):  # what precedes the first separator is no document
                    out.append(None)
                continue
            out.append(_document(body, partial(_nth_document, decoded, len(out))))
    except YAMLError:
        return _whole_stream(decoded)  # raises with the stream's line numbers
    return out


def _nth_document(decoded: str, index: int) -> object:
    return _whole_stream(decoded)[index]


def _document(body: str, whole: Callable[[], object]) -> YAMLDocument:
    found = _ITEMS_LINE.search(body)
    if found is None:
        return _parse(body)
    first = _FIRST_ITEM.match(body, found.end() + 1)
    if first is None:
        return _parse(body)
    indent = len(first.group(1))
    starts = _item_starts(body, first.start(1), indent)
    # The items end at the first line after the last item's first, not blank and not a
    # comment, indented less than them (at indentation 0: a line that does not start an
    # item). A line like that between items makes its batch fail to parse as a sequence,
    # and the document is then parsed whole.
    ending = re.compile(r"^(?=[^ \t\n#-]|-[^ \n])" if indent == 0 else rf"^ {{0,{indent - 1}}}(?=[^ \t\n#])", re.M)
    stop = ending.search(body, starts[-1] + 1)
    items_end = stop.start() if stop is not None else len(body)
    header = _parse(body[:found.start()] + "items: []\n" + body[items_end:])
    if not isinstance(header, dict):
        return _parse(body)
    return YAMLList(header, body, [*starts, items_end], whole)


def _lines_starting(text: str, prefix: str) -> list[int]:
    """Where the lines that begin with ``prefix`` begin (``str.find``: a regex anchored at
    every line start costs far more on a dump of hundreds of megabytes)."""
    found = [0] if text.startswith(prefix) else []
    marker = "\n" + prefix
    at = text.find(marker)
    while at >= 0:
        found.append(at + 1)
        at = text.find(marker, at + 1)
    return found


def _item_starts(body: str, first: int, indent: int) -> list[int]:
    """Where the lines ``{indent spaces}- `` (or a bare ``-``) begin, from ``first`` on."""
    marker = "\n" + " " * indent + "-"
    starts = [first]
    at = body.find(marker, first)
    while at >= 0:
        after = body[at + len(marker):at + len(marker) + 1]
        if after in (" ", "\n", ""):
            starts.append(at + 1)
        at = body.find(marker, at + len(marker))
    return starts


def _parse(body: str) -> object:
    try:
        return yaml_rs.loads(body, parse_datetime=False)
    except yaml_rs.YAMLDecodeError as err:
        raise YAMLError(_one_line(err)) from None


def _one_line(err: Exception) -> str:
    lines = [line for line in str(err).splitlines() if line.strip()]
    found = _POSITION.search(lines[0]) if lines else None
    where = f" at line {found.group(1)}, column {found.group(2)}" if found else ""
    problem = lines[-1].strip() if len(lines) > 1 else (lines[0] if lines else "unreadable")
    return f"invalid YAML{where}: {problem}"
