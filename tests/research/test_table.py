"""``Table``: typed columns that become pandas and Arrow tables, CSV and Parquet files."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kubesched.research import Table

SCHEMA = (("pod", "str"), ("node", "str"), ("attempts", "int"), ("bound", "float"), ("gated", "bool"))
ROWS = [("a", "n1", 1, 0.5, False), ("b", None, None, None, True)]


def table() -> Table:
    return Table.from_rows("pods", SCHEMA, ROWS)  # type: ignore[arg-type]


def test_rows_come_back_as_dicts_in_order() -> None:
    assert list(table().rows()) == [dict(zip([n for n, _ in SCHEMA], row)) for row in ROWS]
    assert len(table()) == 2 and table().column_names == ["pod", "node", "attempts", "bound", "gated"]


def test_to_pandas_keeps_missing_integers_and_booleans_as_nullable() -> None:
    frame = table().to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert str(frame["attempts"].dtype) == "Int64" and str(frame["gated"].dtype) == "boolean"
    assert frame["attempts"].isna().tolist() == [False, True] and frame["bound"].isna().tolist() == [False, True]


def test_to_arrow_has_the_schemas_types() -> None:
    arrow = table().to_arrow()
    assert isinstance(arrow, pa.Table)
    assert arrow.schema.types == [pa.string(), pa.string(), pa.int64(), pa.float64(), pa.bool_()]
    assert arrow.column("node").to_pylist() == ["n1", None]


def test_parquet_reads_back_as_written(tmp_path: Path) -> None:
    path = table().write_parquet(tmp_path / "pods.parquet")
    assert pq.read_table(path).equals(table().to_arrow())


def test_csv_has_a_header_and_empty_cells_for_none(tmp_path: Path) -> None:
    path = table().write_csv(tmp_path / "pods.csv")
    with path.open(newline="") as handle:
        assert list(csv.reader(handle)) == [["pod", "node", "attempts", "bound", "gated"],
                                            ["a", "n1", "1", "0.5", "False"], ["b", "", "", "", "True"]]


def test_columns_that_do_not_match_the_schema_are_refused() -> None:
    with pytest.raises(ValueError, match="do not match the schema"):
        Table("t", (("a", "int"),), {"b": [1]})
    with pytest.raises(ValueError, match="different lengths"):
        Table("t", (("a", "int"), ("b", "int")), {"a": [1], "b": [1, 2]})
