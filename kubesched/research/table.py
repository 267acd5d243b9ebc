"""``Table``: results as columns, for analysis: ``to_pandas()``, ``to_arrow()``, CSV, Parquet.

kubesched's results are lists of plain records; researchers want data frames. A
``Table`` holds named, typed columns (``str``, ``int``, ``float``, ``bool``, any of them
possibly None) and converts on request. pandas and pyarrow are the ``research`` extra:
imported by name (``importlib``) the first time a conversion needs them, so reading
results and writing CSV work without them, and a missing one is one clear error.
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

__all__ = ["Table", "ColumnType", "ExtraMissing", "RESEARCH_EXTRA"]

ColumnType = Literal["str", "int", "float", "bool"]
RESEARCH_EXTRA = "pip install 'kubesched[research]'"
Cell = str | int | float | bool | None

_ARROW_TYPES = {"str": "string", "int": "int64", "float": "float64", "bool": "bool_"}
_PANDAS_DTYPES = {"str": "string", "int": "Int64", "float": "float64", "bool": "boolean"}


class ExtraMissing(ImportError):
    """A conversion needs pandas or pyarrow, and it is not installed."""


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ExtraMissing(f"{name} is not installed: {RESEARCH_EXTRA}") from None


@dataclass(frozen=True, slots=True)
class Table:
    """Named, typed columns of equal length (``columns`` in order)."""

    name: str
    schema: tuple[tuple[str, ColumnType], ...]
    columns: Mapping[str, Sequence[Cell]]

    def __post_init__(self) -> None:
        names = [n for n, _ in self.schema]
        if list(self.columns) != names:
            raise ValueError(f"table {self.name}: columns {list(self.columns)} do not match the schema {names}")
        lengths = {len(v) for v in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"table {self.name}: columns of different lengths {sorted(lengths)}")

    @classmethod
    def from_records(cls, name: str, schema: Sequence[tuple[str, ColumnType]], records: Iterable[Any]) -> Table:
        """A table of the attributes ``schema`` names of each record (dataclasses, named tuples...)."""
        rows = list(records)
        return cls(name, tuple(schema), {column: [getattr(r, column) for r in rows] for column, _ in schema})

    @classmethod
    def from_rows(cls, name: str, schema: Sequence[tuple[str, ColumnType]], rows: Iterable[Sequence[Cell]]) -> Table:
        """A table of rows given as sequences in the schema's order."""
        materialised = list(rows)
        return cls(name, tuple(schema), {column: [row[i] for row in materialised] for i, (column, _) in enumerate(schema)})

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), ()))

    @property
    def column_names(self) -> list[str]:
        return [n for n, _ in self.schema]

    def rows(self) -> Iterator[dict[str, Cell]]:
        """Each row as a dict, in order."""
        names = self.column_names
        for values in zip(*(self.columns[n] for n in names)):
            yield dict(zip(names, values))

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame``; integer and boolean columns use pandas' nullable types."""
        pandas = _module("pandas")
        return pandas.DataFrame({name: pandas.Series(list(self.columns[name]), dtype=_PANDAS_DTYPES[kind])
                                 for name, kind in self.schema})

    def to_arrow(self) -> Any:
        """A ``pyarrow.Table`` with the schema's types (every column nullable)."""
        pyarrow = _module("pyarrow")
        schema = pyarrow.schema([(name, getattr(pyarrow, _ARROW_TYPES[kind])()) for name, kind in self.schema])
        return pyarrow.table({name: list(self.columns[name]) for name, _ in self.schema}, schema=schema)

    def write_csv(self, path: str | Path) -> Path:
        """CSV with a header; None is an empty cell. Needs neither pandas nor pyarrow."""
        out = Path(path)
        with out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(self.column_names)
            writer.writerows(zip(*(self.columns[n] for n in self.column_names)))
        return out

    def write_parquet(self, path: str | Path) -> Path:
        """Parquet (pyarrow), with the schema's types."""
        parquet = _module("pyarrow.parquet")
        out = Path(path)
        parquet.write_table(self.to_arrow(), str(out))
        return out
