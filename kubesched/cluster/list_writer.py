"""Snapshots written back as one JSON ``List``: a cluster's objects as listed (``--save``),
and a snapshot with what-if edits applied, for the commands that read a snapshot file
(``capacity`` and ``compare`` ship paths to their runs)."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import orjson

from .dump_reader import ReadProblem, read_dump
from .snapshot import STDIN, STDIN_NAME, LoadProblem, snapshot_files
from .what_if import WhatIfEdits

__all__ = ["ListWriter", "write_edited"]


class ListWriter:
    """Objects as listed, written one by one into a JSON ``List``."""

    def __init__(self, sink: BinaryIO) -> None:
        self._sink = sink
        self._first = True
        sink.write(b'{"apiVersion":"v1","kind":"List","items":[\n')

    def add(self, obj: dict[str, object]) -> None:
        self._sink.write(orjson.dumps(obj) if self._first else b",\n" + orjson.dumps(obj))
        self._first = False

    def close(self) -> None:
        self._sink.write(b"\n]}\n")


def write_edited(path: str, edits: WhatIfEdits, sink: BinaryIO) -> list[LoadProblem]:
    """The snapshot at ``path`` (a file, a directory, ``-``) with ``edits`` applied, written to
    ``sink`` as one JSON ``List``, for commands that read a snapshot file (``capacity``,
    ``compare``); the problems reading it (the edits' own are in ``edits.problems``)."""
    writer = ListWriter(sink)
    problems: list[LoadProblem] = []
    root = Path(path)
    if str(root) != STDIN and not root.exists():
        return [LoadProblem(path, "", "", "no such file or directory")]
    for file in snapshot_files(root):
        name = STDIN_NAME if str(file) == STDIN else str(file)
        read: list[ReadProblem] = []
        for found in read_dump(file, read):
            for _, edited in edits.feed(name, found):
                writer.add(dict(edited.obj))
        problems.extend(LoadProblem(name, r.obj, r.field, r.message) for r in read)
    for _, edited in edits.rest():
        writer.add(dict(edited.obj))
    writer.close()
    return problems
