"""Reading the recorded exchanges of ``transcript/`` (see its README): what the real API
server was asked and what it answered, for specs that hold the test server to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import orjson

__all__ = ["Exchange", "exchange"]

_DIR = Path(__file__).resolve().parent / "transcript"
_CUT = "[... stream cut"


@dataclass(frozen=True, slots=True)
class Exchange:
    title: str
    method: str
    target: str  # path?query, as sent
    request_headers: dict[str, str]  # lower-case names
    request_body: bytes
    status: int
    response_headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def query(self) -> dict[str, str]:
        query = self.target.split("?", 1)[1] if "?" in self.target else ""
        return dict(parse_qsl(query, keep_blank_values=True))

    def json(self) -> Any:
        return orjson.loads(self.body)

    def request_json(self) -> Any:
        return orjson.loads(self.request_body)

    def events(self) -> list[dict[str, Any]]:
        """A watch response's events (the recording's cut marker left out)."""
        lines = self.body.decode().splitlines()
        return [orjson.loads(line) for line in lines if line.strip() and not line.startswith(_CUT)]


def _split_head(section: str) -> tuple[str, dict[str, str], str]:
    head, _, body = section.partition("\n\n")
    first, *header_lines = head.split("\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return first, headers, body


def exchange(number: int) -> Exchange:
    """The exchange recorded under ``number`` (its file name's prefix)."""
    (path,) = _DIR.glob(f"{number:02d}-*.txt")
    text = path.read_text()
    title = text.split("\n", 1)[0].removeprefix("# ").strip()
    request = text.split("## request\n", 1)[1].split("\n## response\n", 1)[0]
    response = text.split("\n## response\n", 1)[1]
    request_line, request_headers, request_body = _split_head(request.strip("\n"))
    method, target, _ = request_line.split(" ", 2)
    status_line, response_headers, body = _split_head(response.lstrip("\n"))
    status = int(status_line.split(" ", 2)[1])
    return Exchange(title, method, target, request_headers, request_body.strip().encode(), status, response_headers,
                    body.strip("\n").encode() if response_headers.get("transfer-encoding") == "chunked"
                    else body.rstrip("\n").encode() if body.strip() else b"")
