"""A real browser for the HTML reports: Debian's chromium driven by Playwright.

Playwright's own browser downloads are not used: the tests launch the system's
chromium (``.ci/run`` installs it with apt). They skip only when chromium or the
Playwright package is truly missing. Each test's screenshot is kept under
``test-artifacts/`` (ignored by git) for a person to look at.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One chromium per test module: Playwright's sync API keeps an event loop running on
    this thread while it is open, which later tests' ``asyncio.run`` must not find."""
    executable = _chromium()
    if executable is None:
        pytest.skip("chromium is not installed (.ci/run installs it: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


class Page:
    """A page with every console error and uncaught exception collected, and no network:
    any request that is not a ``file:`` URL is refused and counted."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.route(re.compile(r"^(?!file:).*"), self._refuse)

    def _refuse(self, route: Any) -> None:
        self.requests.append(route.request.url)
        route.abort()

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield Page(context.new_page())
    finally:
        context.close()
