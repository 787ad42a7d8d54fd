"""What both transports use to stream a conversation: the one door into six rooms.

The rooms, top to bottom (a room imports only the rooms below it, never this door):

- ``working``: runs away from a tab (a task worker's run host, the run task, ``start_run``);
- ``following``: one tab following one conversation (``Follower``, its relay and timers);
- ``visiting``: who asks and what their frames do (``Visitor``, ``actions``, access);
- ``running``: a run's life, from its task's start to its one ``end()``;
- ``delivery``: the channel layer, a worker's own fan-out, groups, order and replay;
- ``wire``: the protocol as data, frame encoding and the client frames' checks.

Transport-neutral: nothing here imports ``websocket/`` (the Channels consumer and its
routes) or ``sse/`` (the HTTP views). A transport imports this module and nothing deeper
(``tests/test_architecture.py``): it reads its client's frames with ``frames``, hands
them to ``actions``, and writes what a ``Follower`` gives it. The names resolve on first
use, so importing the door needs no settings and loads no model.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django_agent_sessions.streaming.delivery import replay
    from django_agent_sessions.streaming.delivery.layer import own_channel
    from django_agent_sessions.streaming.delivery.socket_io import SocketIO
    from django_agent_sessions.streaming.following import history
    from django_agent_sessions.streaming.following.follower import Follower
    from django_agent_sessions.streaming.running import drain
    from django_agent_sessions.streaming.running.lost import sweep_once
    from django_agent_sessions.streaming.visiting import actions, admission, queueing
    from django_agent_sessions.streaming.visiting.access import (
        CLOSE_ANONYMOUS,
        CLOSE_FORBIDDEN,
        anonymous_owner,
    )
    from django_agent_sessions.streaming.visiting.agent_loading import load_agent
    from django_agent_sessions.streaming.visiting.context import AgentRunContext
    from django_agent_sessions.streaming.visiting.queue_sending import (
        after_end,
        hosting_no_runs,
    )
    from django_agent_sessions.streaming.visiting.visitor import Visitor
    from django_agent_sessions.streaming.wire import encoding, frames
    from django_agent_sessions.streaming.working.starting import start_run, start_run_sync

# name -> (module, attribute), or (package, module) for a module the door hands out whole.
_DOOR: dict[str, tuple[str, str | None]] = {
    "AgentRunContext": ("visiting.context", "AgentRunContext"),
    "CLOSE_ANONYMOUS": ("visiting.access", "CLOSE_ANONYMOUS"),
    "CLOSE_FORBIDDEN": ("visiting.access", "CLOSE_FORBIDDEN"),
    "Follower": ("following.follower", "Follower"),
    "SocketIO": ("delivery.socket_io", "SocketIO"),
    "Visitor": ("visiting.visitor", "Visitor"),
    "actions": ("visiting.actions", None),
    "admission": ("visiting.admission", None),
    "after_end": ("visiting.queue_sending", "after_end"),
    "anonymous_owner": ("visiting.access", "anonymous_owner"),
    "drain": ("running.drain", None),
    "encoding": ("wire.encoding", None),
    "frames": ("wire.frames", None),
    "history": ("following.history", None),
    "hosting_no_runs": ("visiting.queue_sending", "hosting_no_runs"),
    "load_agent": ("visiting.agent_loading", "load_agent"),
    "own_channel": ("delivery.layer", "own_channel"),
    "queueing": ("visiting.queueing", None),
    "replay": ("delivery.replay", None),
    "start_run": ("working.starting", "start_run"),
    "start_run_sync": ("working.starting", "start_run_sync"),
    "sweep_once": ("running.lost", "sweep_once"),
}

__all__ = [  # the table's names, written out for type checkers and linters (a test holds it)
    "CLOSE_ANONYMOUS",
    "CLOSE_FORBIDDEN",
    "AgentRunContext",
    "Follower",
    "SocketIO",
    "Visitor",
    "actions",
    "admission",
    "after_end",
    "anonymous_owner",
    "drain",
    "encoding",
    "frames",
    "history",
    "hosting_no_runs",
    "load_agent",
    "own_channel",
    "queueing",
    "replay",
    "start_run",
    "start_run_sync",
    "sweep_once",
]


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _DOOR[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module = import_module(f"{__name__}.{module_name}")
    return module if attribute is None else getattr(module, attribute)
