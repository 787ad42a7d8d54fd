"""The streaming tests drive runs through the websocket consumer, the simplest client of
the shared package: they use the websocket tests' fixtures (sockets closed after each
test, a scripted agent's settings, signed-in users), and the SSE tests' closing of the
event streams a test opened."""

from tests.sse.conftest import closing_streams  # noqa: F401 - autouse: streams closed
from tests.websocket.conftest import (  # noqa: F401 - fixtures, registered by import
    alice,
    alice_cookie,
    bob_cookie,
    closing_sockets,
    use_agent,
)
