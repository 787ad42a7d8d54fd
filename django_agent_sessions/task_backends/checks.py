"""System checks of where runs execute: ``RUNS``, ``RUNS_BACKEND``, ``RUNS_PER_WORKER``
and ``RUNS_QUEUE_SECONDS`` (ids E060 to E065, W063)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from django_agent_sessions import task_backends
from django_agent_sessions.conf import app_settings
from django_agent_sessions.layers import stream_layer_kind

MODES = ("inline", "tasks")


def check_runs(**kwargs: Any) -> list[CheckMessage]:
    if not app_settings.is_dict():  # E001 says so
        return []
    errors = _numbers()
    mode = app_settings.RUNS
    if mode not in MODES:
        return [*errors, _error(f"RUNS is {mode!r}; it must be 'inline' or 'tasks'.", 60)]
    if mode == "tasks":
        errors += _tasks()
    return errors


def _tasks() -> list[CheckMessage]:
    if not task_backends.available():
        hint = 'Django 6 has it; on Django 5.2: pip install "django-agent-sessions[tasks]".'
        return [_error("RUNS is 'tasks' but Django's Tasks framework is missing.", 61, hint)]
    alias = app_settings.RUNS_BACKEND
    configured = getattr(settings, "TASKS", None) or {"default": {}}
    if alias not in configured:
        message = f"RUNS_BACKEND is {alias!r}, which is not an alias of the TASKS setting."
        return [_error(message, 62, f"TASKS has: {', '.join(map(repr, configured))}.")]
    if _layer_in_process():
        hint = "Configure CHANNEL_LAYERS with Redis, or use PostgreSQL (LISTEN/NOTIFY)."
        message = (
            "Runs are tasks, but the channel layer lives in one event loop: tabs would "
            "hear nothing of runs a task executes."
        )
        return [_error(message, 64, hint)]
    backend = str(configured[alias].get("BACKEND", "ImmediateBackend"))
    if task_backends.workerless(backend) and not settings.DEBUG:
        return [
            Warning(
                f"RUNS_BACKEND {alias!r} is {backend}: runs do not leave the web workers "
                "(immediate) or never run (dummy).",
                hint="Use a backend with workers (django-tasks-db, the app's Celery backend).",
                id="django_agent_sessions.W063",
            )
        ]
    return []


def _layer_in_process() -> bool:
    """A layer no other event loop reaches: the app's local one, or Channels' in-memory."""
    kind = stream_layer_kind()
    if kind != "channels":
        return kind == "local"
    backend = str(settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", ""))
    return backend.endswith("InMemoryChannelLayer")


def _numbers() -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    per_worker = app_settings.RUNS_PER_WORKER
    if not isinstance(per_worker, int) or isinstance(per_worker, bool) or per_worker < 1:
        errors.append(_error(f"RUNS_PER_WORKER is {per_worker!r}; it must be an int >= 1.", 65))
    ahead = app_settings.RUNS_CLAIM_AHEAD
    if not isinstance(ahead, int) or isinstance(ahead, bool) or ahead < 0:
        errors.append(_error(f"RUNS_CLAIM_AHEAD is {ahead!r}; it must be an int >= 0.", 65))
    queue = app_settings.RUNS_QUEUE_SECONDS
    if not isinstance(queue, (int, float)) or isinstance(queue, bool) or queue <= 0:
        errors.append(_error(f"RUNS_QUEUE_SECONDS is {queue!r}; it must be a number > 0.", 65))
    return errors


def _error(message: str, number: int, hint: str | None = None) -> Error:
    hint = hint or "See docs/tasks.md."
    return Error(f"AGENT_SESSIONS: {message}", hint=hint, id=f"django_agent_sessions.E{number:03d}")
