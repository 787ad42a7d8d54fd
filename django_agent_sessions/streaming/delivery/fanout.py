"""A run's events handed to the sockets of its own worker process, not sent through Redis.

Through channels_redis, every event is a ``group_send`` (a lookup of the group and a
push per member) and, on the receiving side, one pop per round trip in the worker's
single receive loop. Measured on one daphne worker with 200 runs streaming beside 1,000
idle sockets, the layer moved 8.9 frames/s and the first tokens waited 31 s (p99).
Nearly always the socket watching a run is the one that started it, in the same process,
so a run hands each event straight to the inboxes of this process's sockets of its
conversation (``deliver``), and the channel layer carries only what other workers need:

- ``run.started``, the end of the run and its approval requests always go through the
  layer too, marked with this process (``ORIGIN``) and whether the run is ``followed``
  (publishes every event there);
- a socket of another worker that receives an event of a run that is not followed asks
  the run for a catch-up, as a socket that joins mid-run does; a catch-up asked from a
  channel that is not local makes the run followed before it answers, so the snapshot
  covers every event before it and the layer carries every event after it;
- a socket drops a layer message from its own process: its inbox had it already.

Events that other code of this process publishes to a conversation (approval decisions,
the end of a waiting or lost run) take the same two paths (``broadcast``), so that a
socket of this process receives everything this process sends it in the order it was sent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Callable
from typing import Any

from django_agent_sessions import telemetry
from django_agent_sessions.streaming.delivery import layer
from django_agent_sessions.streaming.delivery.ordering import Sequencer
from django_agent_sessions.streaming.wire.text import valid_unicode

logger = logging.getLogger(__name__)

Deliver = Callable[[dict[str, Any]], None]

# Sockets of this process, by conversation primary key, then channel name.
_watching: dict[int, dict[str, Deliver]] = {}
# The conversation each of those channels watches.
_watched_by: dict[str, int] = {}


def _new_origin() -> str:
    return uuid.uuid4().hex


ORIGIN = _new_origin()


def _after_fork() -> None:
    # A forked worker (a server that imports the app before forking) is another process:
    # with its parent's origin, it would drop its siblings' events as its own.
    global ORIGIN
    ORIGIN = _new_origin()
    _watching.clear()
    _watched_by.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)

# Threads that are a worker of their own: a run host's event loop (``working.host``) in
# a process that also serves sockets (the immediate task backend, ``start_run_sync``).
# Their runs reach this process's sockets through the layer, as another worker's do:
# the sockets' inboxes belong to another event loop.
_apart: dict[int, str] = {}


def apart() -> None:
    """The calling thread is a worker of its own from now on (see ``_apart``)."""
    _apart[threading.get_ident()] = _new_origin()


def apart_here() -> bool:
    """Whether the calling thread is a worker of its own (``apart``)."""
    return _here() != ORIGIN


def _here() -> str:
    return _apart.get(threading.get_ident(), ORIGIN) if _apart else ORIGIN


def watch(conversation_pk: int, channel_name: str, deliver: Deliver) -> None:
    """From now on, this process's runs of the conversation call ``deliver(message)``."""
    unwatch(channel_name)
    _watching.setdefault(conversation_pk, {})[channel_name] = deliver
    _watched_by[channel_name] = conversation_pk
    telemetry.stream_opened()


def unwatch(channel_name: str) -> None:
    conversation_pk = _watched_by.pop(channel_name, None)
    if conversation_pk is None:
        return
    telemetry.stream_closed()
    sockets = _watching.get(conversation_pk, {})
    sockets.pop(channel_name, None)
    if not sockets:
        _watching.pop(conversation_pk, None)


def is_local(channel_name: str) -> bool:
    """Whether the channel is a socket of this process that watches a conversation."""
    return channel_name in _watched_by and _here() == ORIGIN


def deliver(conversation_pk: int, message: dict[str, Any]) -> None:
    """Hand ``message`` to every socket of this process watching the conversation."""
    if _here() != ORIGIN:
        return
    for channel_name, deliver_to in list(_watching.get(conversation_pk, {}).items()):
        try:
            deliver_to(message)
        except Exception:
            # A socket whose inbox is gone (its event loop closed) must not stop the
            # run or the other sockets.
            logger.warning("Could not hand an event to %s; forgetting it.", channel_name)
            unwatch(channel_name)
    # The time to first token once the text is in the inboxes: recording it holds none back.
    if telemetry.first_tokens and message["event"]["type"] == "text.delta":
        telemetry.first_token(message["event"]["run_id"])


def layer_fields(*, followed: bool) -> dict[str, Any]:
    """What a layer message of a run carries besides its event (see the module doc)."""
    return {"origin": _here(), "followed": followed}


async def broadcast(
    channel_layer: Any,
    group: str,
    conversation_pk: int,
    event: dict[str, Any],
    *,
    followed: bool = True,
    copies: int = 1,
) -> None:
    """``event`` to every socket of the conversation: this process's through their
    inboxes, in order with everything else this process hands them, and the others'
    through the layer (``copies`` times: the layer may lose one). Never raises for the
    layer: the record is the truth, and what the layer loses, sockets recover.

    ``followed=False`` only for a run's events that other workers' sockets must follow
    to see the rest of (``run.started``, see the module doc).
    """
    event = valid_unicode(event)
    deliver(conversation_pk, {"type": "agent.event", "event": event})
    fields = layer_fields(followed=followed)
    try:
        # A span per message through the layer (the run's start, end and requests; every
        # event while another worker follows it); none for this process's own sockets.
        with telemetry.span(telemetry.PUBLISH, {"agent_sessions.event.type": event["type"]}):
            # The copies at once: each is several round trips to Redis.
            sends = [layer.publish(channel_layer, group, event, **fields) for _ in range(copies)]
            outcomes = await asyncio.gather(*sends, return_exceptions=True)
            failed = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
            if failed:
                raise failed[0]  # each copy was tried; the first failure is reported
    except Exception:
        # The layer is down (a Redis restart): nothing stops for it. This process's
        # sockets have the event; other workers' recover what they missed (``watch``).
        logger.warning("Could not publish %s through the channel layer.", event.get("type"))


def from_this_process(message: dict[str, Any]) -> bool:
    return message.get("origin") == _here()


def asks_to_follow(message: dict[str, Any]) -> bool:
    """Whether a layer message is the start of a run that publishes only in its process."""
    return message.get("followed") is False and message["event"].get("type") == "run.started"


def missed_before(message: dict[str, Any], sequencer: Sequencer) -> bool:
    """Whether a layer message of a run that is not ``followed`` comes after events the
    socket never had: it never followed the run (only announced events reached it)."""
    event = message["event"]
    return (
        message.get("followed") is False
        and isinstance(event.get("seq"), int)
        and sequencer.is_behind(str(event["run_id"]), event["seq"] - 1)
    )
