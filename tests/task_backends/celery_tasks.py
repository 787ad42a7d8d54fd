"""Task functions that the Celery worker of the tests runs. Each appends one JSON line to
the file named by its first argument, as do the receivers of the framework's
``task_started`` and ``task_finished`` signals, so that a test reads what the worker did."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from django.apps import apps

from django_agent_sessions import task_backends as framework
from django_agent_sessions.task_backends.celery import CeleryBackend

task = framework.task


def append(path: str, line: dict[str, Any]) -> None:
    with Path(path).open("a") as marker:
        marker.write(json.dumps(line) + "\n")


@task()
def record(path: str, *words: str, **fields: Any) -> None:
    line = {"task": "record", "words": list(words), "fields": fields, "django": apps.ready}
    append(path, {**line, "at": time.time()})


@task()
async def arecord(path: str, word: str) -> None:
    await asyncio.sleep(0)  # a coroutine that really awaits, on a running loop
    append(path, {"task": "arecord", "word": word})


@task(takes_context=True)
def record_context(context: Any, path: str) -> None:
    append(path, {"task": "record_context", "id": context.task_result.id})


@task()
def fail(path: str) -> None:
    append(path, {"task": "fail"})
    raise ValueError("the task failed on purpose")


def not_a_task(path: str) -> None:
    append(path, {"task": "not_a_task"})


def _signal(name: str) -> Any:
    def receive(sender: Any, task_result: Any, **kwargs: Any) -> None:
        if sender is CeleryBackend and task_result.status != "READY":
            line = {"signal": name, "status": str(task_result.status), "id": task_result.id}
            if task_result.errors:
                line["error"] = task_result.errors[0].exception_class_path
            append(task_result.args[0], line)

    return receive


_started = _signal("started")
_finished = _signal("finished")
framework.submodule("signals").task_started.connect(_started)
framework.submodule("signals").task_finished.connect(_finished)
