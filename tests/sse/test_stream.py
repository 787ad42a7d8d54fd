"""``EventStream`` on its own: what Django's ``response.close()`` does to a stream whose
generator is suspended (the client left while a write was in flight)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.contrib.auth.models import User

from django_agent_sessions import layers
from django_agent_sessions.sse.following import response_channel
from django_agent_sessions.sse.stream import EventStream
from django_agent_sessions.streaming.running import lost
from django_agent_sessions.streaming.visiting.visitor import Visitor

pytestmark = pytest.mark.django_db(transaction=True)


async def test_close_from_another_thread_leaves_the_groups_and_the_sweeper(settings):
    settings.CHANNEL_LAYERS = {}
    layer = layers.local_layer()
    visitor = Visitor(await _user(), "new-id", scope={}, channel_layer=layer)
    stream = EventStream(visitor, await response_channel(visitor, "stream"))
    chunks = aiter(stream)
    assert (await anext(chunks)).startswith("retry:")
    assert "event: history" in await anext(chunks)  # the follower waits in its group now
    assert layer.holds(stream.channel_name)
    holders = lost.sweeper._holders
    # Django's ASGI handler calls response.close() in a thread once the response is over,
    # even when the body's generator is left suspended, as it is here.
    thread = threading.Thread(target=stream.close)
    thread.start()
    thread.join()
    for _turn in range(100):
        if stream._body.closed and not layer.holds(stream.channel_name):
            break
        await asyncio.sleep(0.01)
    assert not layer.holds(stream.channel_name)
    assert lost.sweeper._holders == holders - 1
    assert all(task.done() for task in stream._body.tasks)
    await chunks.aclose()  # and the generator's own end changes nothing more
    assert lost.sweeper._holders == holders - 1


async def _user() -> User:
    return await User.objects.acreate(username="alice")
