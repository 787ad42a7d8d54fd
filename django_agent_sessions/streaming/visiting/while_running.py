"""A message sent during a reply (``AGENT_SESSIONS["WHILE_RUNNING"]``).

- ``"busy"`` (the default): refused with ``busy``; the client decides (the packaged page
  offers Stop, then the person sends again). A message never ends work nobody asked to
  stop, and clients written for ``busy`` (the protocol adapters' too) keep working.
- ``"interrupt"``: the message Stops the reply, through the same path as a ``cancel``
  frame, then is sent as a new run once the stopped run's end is recorded.
- ``"steer"``: the message enters the running reply at its next model call
  (``visiting.steering``, ``running.steering``).
- ``"queue"``: the message is stored, shown as queued, and sent as a new run once the
  reply's end is recorded (``queueing``, ``queue_sending``).

The run may be on another web worker or a task worker: its end is awaited through what
every end does anyway. ``lifecycle.end()`` records the end, then publishes the terminal
event to the conversation's group through the channel layer (twice), wherever it runs.
A channel of its own in that group hears it; since the layer delivers at most once,
the record is read again at each terminal event, and after each ``FOLLOW_CHECK_SECONDS``
of silence (a lost end). ``INTERRUPT_SECONDS`` bounds the whole wait: a run that will
not stop (its worker hung) leaves the message refused ``busy``, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from django.core.checks import CheckMessage, Error

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store import holding
from django_agent_sessions.streaming.delivery import layer
from django_agent_sessions.streaming.delivery.groups import group_name
from django_agent_sessions.streaming.running.active_runs import TERMINAL_EVENTS, local_run
from django_agent_sessions.streaming.running.steering import STEER as STEER  # a mode too

logger = logging.getLogger(__name__)

BUSY, INTERRUPT, QUEUE = "busy", "interrupt", "queue"
MODES = (BUSY, INTERRUPT, QUEUE, STEER)


def mode() -> str:
    """What a message sent during a reply does (a bad value: ``busy``, and E146 says so)."""
    value = app_settings.WHILE_RUNNING
    return value if value in MODES else BUSY


def check() -> list[CheckMessage]:
    """E146: ``WHILE_RUNNING`` is one of ``MODES``."""
    value = app_settings.WHILE_RUNNING
    if isinstance(value, str) and value in MODES:
        return []
    choices = ", ".join(repr(choice) for choice in MODES)
    return [
        Error(
            f"AGENT_SESSIONS['WHILE_RUNNING'] is {value!r}; it must be one of {choices}.",
            hint="Remove it to refuse a message sent during a reply with 'busy'.",
            id="django_agent_sessions.E146",
        )
    ]


def interrupts() -> bool:
    return mode() == INTERRUPT


def queues() -> bool:
    return mode() == QUEUE


def for_message(conversation_pk: int | None, with_files: bool, *, chat: bool) -> str:
    """What a message does if a reply is running: the mode, where it applies. ``chat``:
    it came through the app's own transports; the protocol adapters' clients know no
    queue and no steering, so there it is ``busy``."""
    current = mode()
    if conversation_pk is None:
        return BUSY  # a new conversation has no reply to wait for
    if current in (QUEUE, STEER) and not chat:
        return BUSY
    if current == STEER and with_files:
        return BUSY  # a message with files starts a run of its own
    return current


async def interrupt(
    channel_layer: Any, session_pk: int, stop: Callable[[], Awaitable[None]]
) -> bool:
    """Stop the run holding the conversation, if any, and wait for its end; False if it
    had not ended within ``INTERRUPT_SECONDS``."""
    if local_run(session_pk) is None and not await holding.held(session_pk):
        return True  # nothing to stop: one read, and only in this mode
    return await stop_then_wait(channel_layer, session_pk, stop)


async def stop_then_wait(
    channel_layer: Any, session_pk: int, stop: Callable[[], Awaitable[None]]
) -> bool:
    """Stop the conversation's run (``stop``) and wait for its end to be recorded; True
    once nothing holds the conversation, False past ``INTERRUPT_SECONDS``."""
    group, channel = group_name(session_pk), await channel_layer.new_channel()
    # In the group before the Stop: its end cannot pass unheard.
    await layer.retrying(channel_layer.group_add, group, channel)
    try:
        await stop()
        return await _ended(channel_layer, channel, session_pk)
    finally:
        try:
            await channel_layer.group_discard(group, channel)
        except Exception:  # the group's membership expires on its own
            logger.warning("Could not leave the group of conversation %s.", session_pk)


async def _ended(channel_layer: Any, channel: str, session_pk: int) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + float(app_settings.INTERRUPT_SECONDS)
    while await holding.held(session_pk):
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        wait = min(remaining, float(app_settings.FOLLOW_CHECK_SECONDS))
        # Past it: a lost end, or a run still stopping; the record says which.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(_terminal(channel_layer, channel), wait)
    return True


async def _terminal(channel_layer: Any, channel: str) -> None:
    """Until an end of a run of the conversation arrives on ``channel``."""
    while True:
        message = await channel_layer.receive(channel)
        event = message.get("event")
        if isinstance(event, dict) and event.get("type") in TERMINAL_EVENTS:
            return
