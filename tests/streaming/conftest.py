"""The streaming tests drive runs through the websocket consumer, the simplest client of
the shared package: they use the websocket tests' fixtures (sockets closed after each
test, a scripted agent's settings, signed-in users)."""

from tests.websocket.conftest import (  # noqa: F401 - fixtures, registered by import
    alice,
    alice_cookie,
    bob_cookie,
    closing_sockets,
    use_agent,
)
