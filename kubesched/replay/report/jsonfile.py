"""Results as JSON: every replay's points and the averaged curves."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import orjson

from ..spec import ReplayResult
from .summary import summarize

__all__ = ["json_document", "write_json"]


def json_document(results: Sequence[ReplayResult]) -> dict[str, object]:
    return {
        "replays": [dataclasses.asdict(r) for r in results],
        "curves": [dataclasses.asdict(c) for c in summarize(results)],
    }


def write_json(results: Sequence[ReplayResult], path: str | Path) -> Path:
    out = Path(path)
    out.write_bytes(orjson.dumps(json_document(results), option=orjson.OPT_INDENT_2))
    return out
