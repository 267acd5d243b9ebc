"""Results as JSON: every replay's points and the averaged curves."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import orjson

from ..spec import ReplayResult
from .summary import summarize

__all__ = ["json_document", "write_json"]


RECORDED = ("pod_events", "series")
"""Fields of a recorded replay left out of the JSON: ``--output`` writes them as tables (CSV, Parquet)."""


def json_document(results: Sequence[ReplayResult]) -> dict[str, object]:
    return {
        "replays": [_without_recording(dataclasses.asdict(dataclasses.replace(r, pod_events=[], series=[])))
                    for r in results],
        "curves": [dataclasses.asdict(dataclasses.replace(c, series_times=[], series_allocation=[]))
                   for c in summarize(results)],  # the series are series.csv / series.parquet
    }


def _without_recording(document: dict[str, object]) -> dict[str, object]:
    for key in RECORDED:
        document.pop(key, None)
    return document


def write_json(results: Sequence[ReplayResult], path: str | Path) -> Path:
    out = Path(path)
    out.write_bytes(orjson.dumps(json_document(results), option=orjson.OPT_INDENT_2))
    return out
