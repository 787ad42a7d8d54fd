"""The screen sizes the browser tests run at, and how they pair with the transports."""

from __future__ import annotations

from typing import Any

import pytest

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "color_scheme": "dark"}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}


def desktop_and_phone(name: str) -> Any:
    """Run a test at desktop size, and on a phone in dark mode (``name``, ``options``)."""
    cases = [(name, DESKTOP), (f"{name}-phone-dark", PHONE)]
    return pytest.mark.parametrize(("name", "options"), cases)


def each_transport_and_size(server: str, name: str) -> Any:
    """Run a test on both transports and at both sizes, each once: at desktop size over
    the websocket, and on a phone in dark mode over SSE. ``server`` names the module's
    server fixture, which is given the transport.

    A pair, not all four: the page's layout depends on the screen and not the transport
    (the same HTML, CSS and script on both; a transport only carries frames), and what
    a transport does does not depend on the screen. The websocket's phone layout is
    also tested by ``test_accessibility_and_screenshots`` and ``test_phone_sized_screen``.
    """
    cases = [("websocket", name, DESKTOP), ("sse", f"{name}-phone-dark", PHONE)]
    # Module scope, as the server's: the module's other tests share its two servers.
    return pytest.mark.parametrize(
        (server, "name", "options"),
        cases,
        indirect=[server],
        ids=["websocket", "sse-phone"],
        scope="module",
    )
