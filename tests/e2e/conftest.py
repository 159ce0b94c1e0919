"""Headless Chromium (Debian's package) driven by Playwright's sync API, against pytest-django's live server.

Locally, a machine without /usr/bin/chromium skips these tests; under CI=true a missing browser fails.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import chromium

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture(scope="module", autouse=True)
def _sync_orm_beside_playwright() -> Iterator[None]:
    # Playwright's sync API keeps an event loop running in this thread, which Django's async-safety check
    # mistakes for async code; the ORM calls in these tests are plain sync code. Module-scoped so that it
    # also covers each test's database flush, and is undone before the rest of the suite runs.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="module")  # Playwright's loop must stop before the rest of the suite runs
def browser() -> Iterator[object]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser, live_server):  # noqa: ANN001 - Playwright objects
    context = browser.new_context(viewport={"width": 1100, "height": 900}, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def shoot():
    """Save a full-page screenshot under tests/e2e/screenshots/<name>.png (gitignored)."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def save(page, name: str) -> None:  # noqa: ANN001
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    return save
