"""The Alibaba GPU cluster trace (``cluster-trace-gpu-v2023``, "openb"), as CSV rows.

Nodes: ``sn,cpu_milli,memory_mib,gpu,model``. Pods: ``name,cpu_milli,memory_mib,
num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``
(``gpu_spec``, ``qos``, ``pod_phase``, ``deletion_time`` and ``scheduled_time`` may be
missing; ``qos``, ``pod_phase`` and ``scheduled_time`` are not read). The trace's own
rules: ``num_gpu == 1`` with ``gpu_milli < 1000`` is a share of one GPU, any other GPU
pod takes ``num_gpu`` whole GPUs; ``gpu_spec`` lists the accepted GPU models,
``|``-separated; times are seconds.

Every bad cell is reported (file, line, column), not just the first, so a broken
trace is fixed in one pass.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from .errors import TraceError, TraceProblem

__all__ = ["NodeRow", "PodRow", "read_nodes", "read_pods", "NODE_COLUMNS", "POD_COLUMNS"]

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
"""Pod columns a trace must have (``creation_time`` too, for the timeline mode)."""
MAX_PROBLEMS = 20

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class NodeRow:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class PodRow:
    name: str
    cpu_milli: int
    memory_mib: int
    num_gpu: int
    gpu_milli: int  # per GPU: below 1000 only for a share of one GPU
    gpu_spec: str
    creation_time: float
    deletion_time: float | None


class _Cells:
    """One row's cells, read by column name, problems collected with file/line/column."""

    def __init__(self, file: str, line: int, row: dict[str, str], problems: list[TraceProblem]) -> None:
        self.file, self.line, self.row, self.problems = file, line, row, problems

    def problem(self, column: str, message: str) -> None:
        self.problems.append(TraceProblem(self.file, self.line, column, message))

    def text(self, column: str) -> str:
        value = self.row.get(column)
        return "" if value is None or value.strip() == "nan" else value.strip()

    def integer(self, column: str, low: int = 0, high: int | None = None) -> int | None:
        """The cell as an integer in ``low..high``; None (and a problem) when it is not."""
        raw = self.text(column)
        try:
            value = int(raw)
        except ValueError:
            try:  # pandas writes integer columns with gaps as 12.0
                as_float = float(raw)
            except ValueError:
                as_float = 0.5
            if not as_float.is_integer():
                self.problem(column, f"must be an integer, got {raw!r}")
                return None
            value = int(as_float)
        if value < low or (high is not None and value > high):
            bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
            self.problem(column, f"must be {bounds}, got {value}")
            return None
        return value

    def seconds(self, column: str, required: bool) -> float | None:
        raw = self.text(column)
        if not raw:
            if required:
                self.problem(column, "is required")
            return None
        try:
            value = float(raw)
        except ValueError:
            self.problem(column, f"must be a number of seconds, got {raw!r}")
            return None
        if value < 0:
            self.problem(column, f"must not be negative, got {raw}")
            return None
        return value


def _rows(path: Path, required: tuple[str, ...], parse: Callable[[_Cells], T]) -> list[T]:
    file = str(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as err:
        raise TraceError([TraceProblem(file, 0, "", err.strerror or str(err))]) from None
    problems: list[TraceProblem] = []
    out: list[T] = []
    with handle:
        try:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                raise TraceError([TraceProblem(file, 1, ",".join(missing), "missing column(s); the header has "
                                               + (",".join(header) or "nothing"))])
            for line, row in _numbered(reader):
                if None in row:  # more cells than header columns
                    problems.append(TraceProblem(file, line, "", f"has {len(header) + len(row[None])} cells, the header {len(header)}"))  # type: ignore[index]
                    continue
                out.append(parse(_Cells(file, line, row, problems)))
                if len(problems) >= MAX_PROBLEMS:
                    break
        except UnicodeDecodeError as err:
            raise TraceError([TraceProblem(file, 0, "", f"not UTF-8 text (byte {err.start})")]) from None
        except csv.Error as err:
            raise TraceError([TraceProblem(file, reader.line_num, "", f"bad CSV: {err}")]) from None
    if problems:
        raise TraceError(problems)
    if not out:
        raise TraceError([TraceProblem(file, 1, "", "has no rows")])
    return out


def _numbered(reader: "csv.DictReader[str]") -> Iterator[tuple[int, dict[str, str]]]:
    """Rows with the file line they end on (quoted cells may span lines)."""
    for row in reader:
        yield reader.line_num, row


def read_nodes(path: str | Path) -> list[NodeRow]:
    """The node list; raises ``TraceError`` naming every bad cell."""
    names: set[str] = set()

    def parse(cells: _Cells) -> NodeRow:
        name = cells.text("sn")
        if not name:
            cells.problem("sn", "is required")
        elif name in names:
            cells.problem("sn", f"duplicate node {name!r}")
        names.add(name)
        return NodeRow(name, cells.integer("cpu_milli", 1) or 0, cells.integer("memory_mib") or 0,
                       cells.integer("gpu") or 0, cells.text("model"))

    return _rows(Path(path), NODE_COLUMNS, parse)


def read_pods(path: str | Path, need_times: bool = False) -> list[PodRow]:
    """The pod list; ``need_times``: every pod must have a ``creation_time`` (timeline mode)."""
    names: set[str] = set()
    required = POD_COLUMNS + (("creation_time",) if need_times else ())

    def parse(cells: _Cells) -> PodRow:
        name = cells.text("name")
        if not name:
            cells.problem("name", "is required")
        elif name in names:
            cells.problem("name", f"duplicate pod {name!r}")
        names.add(name)
        num_gpu = cells.integer("num_gpu")
        gpu_milli = cells.integer("gpu_milli", 0, 1000)
        if num_gpu is not None and gpu_milli is not None:
            if num_gpu == 0 and gpu_milli:
                cells.problem("gpu_milli", f"must be 0 for a pod with num_gpu 0, got {gpu_milli}")
            if num_gpu > 0 and not gpu_milli:
                cells.problem("gpu_milli", "must be above 0 for a pod with GPUs")
            if num_gpu > 1:
                gpu_milli = 1000  # the trace's rule: only a single GPU is ever shared
        created = cells.seconds("creation_time", need_times)
        deleted = cells.seconds("deletion_time", False)
        if created is not None and deleted is not None and deleted < created:
            cells.problem("deletion_time", f"is before creation_time ({deleted:g} < {created:g})")
        return PodRow(name, cells.integer("cpu_milli") or 0, cells.integer("memory_mib") or 0, num_gpu or 0,
                      gpu_milli or 0, cells.text("gpu_spec"), created or 0.0, deleted)

    return _rows(Path(path), required, parse)
