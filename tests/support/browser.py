"""Headless Chromium (Debian's package) through Playwright's sync API, launched the same way by every
browser test. Locally a machine without Chromium skips those tests; under CI=true a missing browser fails."""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched Playwright browser, closed on the way out (Playwright's objects are untyped here)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium is missing at {CHROMIUM}: CI must run the browser tests")
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright  # a dev dependency: missing means a broken install

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def log_in(page: Any, next_path: str, username: str, password: str, base_url: str = "") -> None:
    """Log in through the login page and land on ``next_path`` (``base_url`` when the page has none)."""
    page.goto(f"{base_url}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form[action='/accounts/login/'] button[type=submit]")
    page.wait_for_url(f"**{next_path}")
