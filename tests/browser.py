"""A real headless Chromium for the page tests: Debian's ``chromium-headless-shell``
driven by Playwright (which never downloads a browser of its own here). The headless
shell is the Chromium build Playwright itself uses for headless runs: the same engine
without the desktop browser around it, which took a fifth more CPU on the same pages
(``CHROMIUM=/usr/bin/chromium`` runs them in the full browser).

Use the ``browser`` fixture (one browser per test module) and open pages from it;
``save_screenshot`` writes PNGs under the run's artifact directory.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium-headless-shell")
    if path is None:
        # A missing browser is a failure, never a skip: bin/test installs it.
        pytest.fail(
            "Chromium is not installed; run bin/test (it installs Debian's "
            "chromium-headless-shell)."
        )
    return path


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """Debian's Chromium under Playwright, closed on the way out."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as instance:
        yield instance


def save_screenshot(page: Any, name: str) -> Path:
    """Save a full-page PNG as a test artifact and return its path."""
    directory = Path(settings.ARTIFACTS_DIR) / "screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


AXE_PATH = Path(__file__).resolve().parents[1] / ".cache/npm/node_modules/axe-core/axe.min.js"


def axe_violations(page: Any, impacts: tuple[str, ...] = ("serious", "critical")) -> list[str]:
    """Run axe-core (installed from npm by bin/test) on the page; its serious violations.

    The page's context must be opened with ``bypass_csp=True``: axe is injected as a
    script of the test's, which a strict Content-Security-Policy would rightly refuse.
    """
    if not AXE_PATH.exists():
        pytest.fail(f"axe-core is not installed at {AXE_PATH}; run bin/test (it installs it).")
    page.add_script_tag(content=AXE_PATH.read_text())
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}))"
    )
    return [
        f"{v['impact']}: {v['id']} ({v['help']}) at {v['nodes']}"
        for v in result
        if v["impact"] in impacts
    ]
