"""Fixtures: a fresh server per test and an httpx client on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.apiserver.server import APIServer


@pytest.fixture
def server() -> Iterator[APIServer]:
    api = APIServer(bookmark_interval=0.2, history=1000).start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def client(server: APIServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10.0, verify=False) as http:
        yield http


def pod(name: str, namespace: str = "default", **spec: object) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "image": "img"}], **spec}}


def watch_events(http: httpx.Client, path: str, params: dict[str, str], count: int,
                 timeout: float = 10.0,
                 until: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """Read ``count`` events, or up to the one ``until`` accepts (fewer if the server ends the stream)."""
    events: list[dict[str, Any]] = []
    with http.stream("GET", path, params={"watch": "true", **params}, timeout=timeout) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line:
                continue
            events.append(orjson.loads(line))
            if len(events) >= count or (until is not None and until(events[-1])):
                break
    return events
