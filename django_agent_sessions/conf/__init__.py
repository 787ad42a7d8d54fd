"""Settings for django-agent-sessions, read lazily from ``settings.AGENT_SESSIONS``.

Nothing is read at import time, so projects may configure the app after importing it.
A value is read on first access and then kept, because several are read on every
session operation (measured: the lookup through ``settings`` was about 4 microseconds
per value in a busy event loop); Django's ``setting_changed`` signal, which
``override_settings`` sends, forgets the kept values, so tests see their overrides.
Changing ``settings.AGENT_SESSIONS`` in place at run time is not supported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed

DEFAULTS: dict[str, Any] = {
    # Dotted path to an agents.Agent, or to a callable returning one (it may take the scope).
    "AGENT": None,
    # Dotted path to a callable that takes the default AgentRunContext of a run started
    # from a tab (either transport) and returns what its tools receive as ctx.context.
    "RUN_CONTEXT": None,
    # Anonymous websocket users may chat; their sessions are bound to the Django session key.
    "ALLOW_ANONYMOUS": False,
    # Largest inbound websocket frame, in bytes; larger ones get an error frame.
    "MAX_MESSAGE_BYTES": 64 * 1024,
    # Largest single stored item, in bytes of its JSON text. None disables the cap.
    "MAX_ITEM_BYTES": 4 * 1024 * 1024,
    # Deepest nesting of lists and objects inside one item.
    "MAX_ITEM_DEPTH": 100,
    # Conversations with no activity for this long are pruned (e.g. "30d"); None keeps them.
    "RETENTION": None,
    # Run DjangoSession's database work in the single shared sync thread, as Django's own
    # async ORM does (True), or in a thread pool with one connection per thread (False).
    "THREAD_SENSITIVE": True,
    # Where runs execute (docs/tasks.md): "inline", in the web worker that took the
    # message, or "tasks": each run and each resumption after approvals is a task of
    # Django's Tasks framework, enqueued on the TASKS backend alias RUNS_BACKEND names,
    # and executed by a task worker (the web workers take messages and follow).
    "RUNS": "inline",
    "RUNS_BACKEND": "default",
    # Most runs one task worker process executes at once (they are async I/O, on one
    # event loop); a task past it waits for a run to end, so other workers take the next.
    "RUNS_PER_WORKER": 200,
    # Starts a task worker claims along with each task it takes, from those whose tasks
    # still wait in the queue (a burst of first messages need not wait for one task
    # after another); 0: each run waits for its own task.
    "RUNS_CLAIM_AHEAD": 16,
    # How long a run may wait in the queue for a task worker; past it, it ends failed
    # (worker_lost), like a run whose worker died.
    "RUNS_QUEUE_SECONDS": 300.0,
    # Websocket runs. Keep running a run when its last socket disconnects (True), or
    # cancel it (False: nobody is watching, so nobody pays for tokens nobody reads).
    "CONTINUE_RUNS_AFTER_DISCONNECT": False,
    # Runs a user may start per period, counted in Django's cache: "N/s", "N/m", "N/h"
    # or "N/d". None disables the limit. Use a cache shared by all workers in production.
    "RATE_LIMIT": "30/m",
    # Most bytes of assistant text and item content one run may stream; past it the run
    # is cancelled and reported failed. Bounds memory for clients that read nothing.
    "MAX_RUN_BYTES": 2 * 1024 * 1024,
    # A running run renews its lease this often (seconds / 3). A "running" record whose
    # lease expired belongs to a dead worker; the next run on the session takes it over.
    "RUN_LEASE_SECONDS": 60,
    # Text deltas are coalesced and sent every this many seconds, or sooner once this
    # many bytes are pending, so the channel layer carries a few frames, not every token.
    "DELTA_FLUSH_SECONDS": 0.04,
    "DELTA_FLUSH_BYTES": 1024,
    # How long a run may wait for the decisions on its tool calls that need approval
    # ("30s", "15min", "1h", "2d" or a timedelta). Past it, the run ends as cancelled with
    # its pending calls rejected.
    "APPROVAL_TIMEOUT": "1h",
    # The history frame a socket gets on connect holds at most this many newest items,
    # and at most this many bytes of items (the newest item is always sent, however
    # large), so a socket that reads nothing holds a bounded frame. Older items are
    # paged with "load_older". None disables the byte budget.
    "HISTORY_LIMIT": 500,
    "HISTORY_MAX_BYTES": 1024 * 1024,
    # The streaming wing's timers, in seconds. Operators rarely change them; tests make
    # them short so that they wait for what happens, not for a clock.
    # When a socket leaves a run, the run asks who still watches it and is cancelled if
    # nobody answers within this time (unless CONTINUE_RUNS_AFTER_DISCONNECT).
    "PRESENCE_TIMEOUT_SECONDS": 1.0,
    # A socket that joins a run of another worker asks it for a snapshot; unanswered
    # within this time, it asks again (three times), then shows the stored history.
    "CATCHUP_TIMEOUT_SECONDS": 1.0,
    # An event missing from a run's sequence is waited for this long; then the tab asks
    # the run where it stands (or reads the stored outcome) and shows that.
    "GAP_TIMEOUT_SECONDS": 0.5,
    # A tab that has heard nothing of the run it follows for this long asks the run
    # (or, for a run that waits for approvals, the database) whether it missed
    # anything: a lost end or decision is shown within this plus CATCHUP_TIMEOUT_SECONDS.
    "FOLLOW_CHECK_SECONDS": 5.0,
    # A worker told to stop (SIGTERM, through django_agent_sessions.Draining) lets
    # its runs finish for this long; a run still going then ends "interrupted". Keep it
    # below the platform's grace period before SIGKILL (Kubernetes: 30 s by default).
    "DRAIN_SECONDS": 25.0,
    # How long a stopped run may take to finish the database write it has in flight.
    "SETTLE_SECONDS": 10.0,
    # While a process has sockets, it looks this often (and at least every
    # RUN_LEASE_SECONDS / 4) for runs whose worker died.
    "SWEEP_SECONDS": 15.0,
    # The chat page's transport: "websocket" (Channels), "sse" (Server-Sent Events and
    # POSTs, any ASGI server), or None: "websocket" when Channels is installed and the
    # project configures CHANNEL_LAYERS, else "sse".
    "TRANSPORT": None,
    # An HTTP stream writes a comment this often when it has nothing to say (proxies
    # close silent connections: nginx after 60 s), and ends after SSE_STREAM_SECONDS
    # (the browser reconnects at once), so that deploys never wait on old streams.
    "SSE_HEARTBEAT_SECONDS": 15.0,
    "SSE_STREAM_SECONDS": 300.0,
    # Keep sweeping after a worker's last socket closed (from its first socket on: daphne
    # has no startup hook). Off: the sweep command covers conversations nobody opens.
    "SWEEP_IN_WORKERS": False,
    # Files given to the agent: a dict over files.storage.DEFAULTS (the STORAGES alias,
    # how long inline data must be to be stored as a file, the in-memory cache).
    "ATTACHMENTS": None,
    # The tags a person may put on a rating of a reply (feedback), in the order shown.
    "FEEDBACK_TAGS": ("inaccurate", "incomplete", "unhelpful", "unsafe", "too long"),
    # Token budgets per user: a dict over usage.quotas.DEFAULTS (None: no budgets).
    "QUOTAS": None,
    # The price of a million tokens per model ({"model": {"input": ..., "cached_input":
    # ..., "output": ...}}), for the usage page's costs (usage/prices.py). None by default.
    "PRICES": None,
    # OpenTelemetry traces and metrics (docs/operations.md): a dict over
    # telemetry.settings.DEFAULTS (on, no message text in spans, no trace URL). None: those.
    "TELEMETRY": None,
    # Content search (store.search): {"ENABLED": False switches the search of messages
    # off (writes keep no searchable text, so no index costs them anything), True by
    # default; "LANGUAGE": PostgreSQL's text search configuration, "simple" by default;
    # "TOOL_OUTPUTS": find tools' outputs too, False}. After changing any of them, run
    # the agent_sessions_reindex command.
    "SEARCH": None,
    # Scheduled runs (docs/schedules.md). A firing is missed when no scheduler fired it
    # within SCHEDULE_GRACE of its time (schedulers stopped, the database down): "skip"
    # waits for the schedule's next firing in the future; "once" fires once to catch up
    # (however many were missed), then goes on. A later firing still counts as on time
    # while the grace lasts, so keep the schedulers' wake interval well below it.
    "SCHEDULE_MISSED": "skip",
    # Who titles a conversation after its first exchange (titles/settings.py): None, the
    # start of the first message; "agent", the replying agent's model; {"MODEL": name};
    # or {"FUNCTION": dotted path}. In the background, after the reply; a rename wins.
    "SCHEDULE_GRACE": "5min",
    "TITLES": None,
    # How long a title waits, at most, for a moment when no message of its worker waits
    # for its reply's first token (streaming/running/arrivals.py); then it is written.
    "TITLE_WAIT_SECONDS": 30.0,
    # Temporary chats (temporary/settings.py): removed with all they wrote this long
    # after their last activity, or TEMPORARY_GRACE_SECONDS after their last page
    # closed, whichever comes first. FORCE_TEMPORARY: True, or a callable (or its
    # dotted path) taking the user, makes every new chat of the chat page temporary.
    "TEMPORARY_TTL": "1d",
    "FORCE_TEMPORARY": False,
    "TEMPORARY_GRACE_SECONDS": 30.0,
    # Share links (sharing/settings.py): "off", "login" (only signed-in people may open
    # a link) or "public" (anyone with the link). Off by default: sharing is opt-in.
    "SHARE_LINKS": "off",
    # What a message sent during a reply does (streaming/visiting/while_running.py):
    # "busy", refused (the client may Stop, then send); "interrupt", it Stops the reply
    # and is sent once the reply's end is recorded, waited for up to INTERRUPT_SECONDS
    # (then refused "busy"); "steer", it joins the reply at its next model call
    # (streaming/running/steering.py).
    "WHILE_RUNNING": "busy",
    "INTERRUPT_SECONDS": 10.0,
}


class Settings:
    """Attribute access to ``AGENT_SESSIONS`` merged over :data:`DEFAULTS`."""

    @property
    def _user_settings(self) -> Mapping[str, Any]:
        value = getattr(settings, "AGENT_SESSIONS", {})
        # type() first: read on every session operation, and the ABC check is the slow part.
        return value if type(value) is dict or isinstance(value, Mapping) else {}

    def is_dict(self) -> bool:
        """Whether ``AGENT_SESSIONS`` is a mapping (a system check reports it if not)."""
        return isinstance(getattr(settings, "AGENT_SESSIONS", {}), Mapping)

    def configured_keys(self) -> set[str]:
        """The keys the project set, known or not."""
        return set(self._user_settings)

    def __getattr__(self, name: str) -> Any:
        # Only called for a value not kept yet: kept values are instance attributes.
        if name not in DEFAULTS:
            raise AttributeError(f"Unknown AGENT_SESSIONS setting: {name!r}")
        value = self._user_settings.get(name, DEFAULTS[name])
        self.__dict__[name] = value
        return value

    def forget(self) -> None:
        """Drop the kept values: the next access reads ``settings`` again."""
        self.__dict__.clear()


app_settings = Settings()


def _forget_on_change(*, setting: str, **kwargs: Any) -> None:
    if setting == "AGENT_SESSIONS":
        app_settings.forget()


# Connected here, not in AppConfig.ready(): the kept values live in this module, and a
# receiver connected at import exists before the first value is kept.
setting_changed.connect(_forget_on_change, dispatch_uid="django_agent_sessions.conf")
