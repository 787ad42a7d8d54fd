"""Django's Tasks framework on Celery: ``CeleryBackend`` sends every Django task as one
generic Celery task, ``execute_django_task`` (its Celery name is its dotted path,
``TASK_NAME``), which a Celery worker runs.

::

    TASKS = {
        "default": {
            "BACKEND": "django_agent_sessions.task_backends.celery.CeleryBackend",
            # Optional: the dotted path of the Celery app; by default celery.current_app.
            "OPTIONS": {"APP": "myproject.celery.app"},
        }
    }

A message names the Django task by its module path (``Task.module_path``) and carries its
arguments, which must be JSON (as for every backend of the framework). The worker imports
that path and runs it only if it is a framework ``Task`` (a function decorated with
``@task``): a message cannot call an arbitrary function. Async task functions run through
``Task.call`` (asgiref's ``async_to_sync``), one event loop per task.

- Queues: the framework's ``default`` queue is Celery's default queue (``task_default_queue``
  and ``task_routes`` decide); any other ``queue_name`` is the Celery queue of that name
  (``celery worker -Q name``).
- ``run_after`` becomes the message's ``eta``. Priorities are refused
  (``supports_priority = False``): Celery's priorities depend on the broker's settings.
- Results are not kept (``supports_get_result = False``): ``enqueue`` returns a ``READY``
  result whose id is the Celery task id, and the task function's return value is dropped.
- The worker sends the framework's ``task_started`` and ``task_finished`` signals (sender
  ``CeleryBackend``) around each task; a failed task is also a failed Celery task.

The worker must import this module so that the generic task is registered:
``Celery("myproject", include=["django_agent_sessions.task_backends.celery"])``. Celery's
prefork pool runs one task per child process at a time: a long run that mostly waits on a
model holds a whole process, where ``--pool=threads --concurrency=N`` runs N runs in one
process.

The generic task is ``acks_late``: its message is acknowledged when the task ends, so a
message a worker took but had not finished (a crash, a deploy's cold stop) goes back to the
queue instead of being lost. ``reject_on_worker_lost=False``: when the process running a
task dies (killed, out of memory), the message is acknowledged and the task fails, rather
than being queued again, so that a task that kills its worker is not redelivered to one
worker after another. An agent run decides from its own run record whether it already ran.
"""

from __future__ import annotations

import traceback
import uuid
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from django.utils.module_loading import import_string

from django_agent_sessions import task_backends as framework

try:
    import celery
except ModuleNotFoundError as error:  # pragma: no cover - tested in a process without it
    if error.name != "celery":
        raise
    raise ImportError(
        'The Celery task backend needs Celery: pip install "django-agent-sessions[celery]".'
    ) from error

# Celery's own naming: the function's dotted path, so that the name says where it lives.
TASK_NAME = "django_agent_sessions.task_backends.celery.execute_django_task"

# The framework's name of its default queue (the same on Django 6 and in the backport).
DEFAULT_QUEUE_NAME = "default"


class CeleryBackend(framework.base_backend_class()):  # type: ignore[misc]
    """A backend of Django's Tasks framework whose tasks a Celery worker runs."""

    supports_defer = True
    supports_async_task = True
    supports_get_result = False
    supports_priority = False

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        self.app_path: str | None = self.options.get("APP")

    @property
    def app(self) -> celery.Celery:
        # Looked up at each enqueue, not once: the backend may be built (when a module
        # with an @task is imported) before the project has imported its Celery app.
        if self.app_path is None:
            return celery.current_app  # type: ignore[no-any-return]
        try:
            return import_string(self.app_path)  # type: ignore[no-any-return]
        except ImportError as error:
            raise ImproperlyConfigured(
                f"TASKS[{self.alias!r}]['OPTIONS']['APP'] = {self.app_path!r} cannot be "
                f"imported: {error}"
            ) from error

    def enqueue(self, task: Any, args: Any, kwargs: Any) -> Any:
        self.validate_task(task)
        base = framework.base_module()
        result = base.TaskResult(
            task=task,
            id=str(uuid.uuid4()),
            status=base.TaskResultStatus.READY,
            enqueued_at=timezone.now(),
            started_at=None,
            finished_at=None,
            last_attempted_at=None,
            args=args,
            kwargs=kwargs,
            backend=self.alias,
            errors=[],
            worker_ids=[],
        )
        options: dict[str, Any] = {}
        if task.queue_name != DEFAULT_QUEUE_NAME:
            options["queue"] = task.queue_name
        if task.run_after is not None:
            options["eta"] = task.run_after
        # The result's args and kwargs are the framework's JSON form of them (tuples as
        # lists), what the task function receives on any backend.
        self.app.send_task(
            TASK_NAME,
            args=(task.module_path, result.args, result.kwargs, self.alias),
            task_id=result.id,
            **options,
        )
        framework.submodule("signals").task_enqueued.send(type(self), task_result=result)
        return result


def load_task(module_path: str) -> Any:
    """The framework ``Task`` at ``module_path``; refused (the framework's invalid-task
    error) if the path cannot be imported or names anything else."""
    refused = framework.invalid_task_error()
    try:
        found = import_string(module_path)
    except ImportError as error:
        raise refused(f"{TASK_NAME}: {module_path!r} cannot be imported: {error}") from error
    if not isinstance(found, framework.base_module().Task):
        raise refused(
            f"{TASK_NAME}: {module_path!r} is not a task of Django's Tasks framework (a "
            "function decorated with @task), so it is not run."
        )
    return found


def run_task(task: Any, result: Any) -> None:
    """Runs ``task`` with ``result``'s arguments, between the framework's ``task_started``
    and ``task_finished`` signals, updating ``result`` as the framework's backends do."""
    base = framework.base_module()
    signals = framework.submodule("signals")
    started = timezone.now()
    object.__setattr__(result, "status", base.TaskResultStatus.RUNNING)
    object.__setattr__(result, "started_at", started)
    object.__setattr__(result, "last_attempted_at", started)
    signals.task_started.send(sender=CeleryBackend, task_result=result)
    context = (base.TaskContext(task_result=result),) if task.takes_context else ()
    try:
        task.call(*context, *result.args, **result.kwargs)
    except Exception as error:
        kind = type(error)
        result.errors.append(
            base.TaskError(
                exception_class_path=f"{kind.__module__}.{kind.__qualname__}",
                traceback="".join(traceback.format_exception(kind, error, error.__traceback__)),
            )
        )
        _finish(result, base.TaskResultStatus.FAILED)
        raise
    _finish(result, base.TaskResultStatus.SUCCESSFUL)


def _finish(result: Any, status: Any) -> None:
    object.__setattr__(result, "finished_at", timezone.now())
    object.__setattr__(result, "status", status)
    framework.submodule("signals").task_finished.send(sender=CeleryBackend, task_result=result)


@celery.shared_task(  # type: ignore[untyped-decorator,misc]
    name=TASK_NAME, bind=True, acks_late=True, reject_on_worker_lost=False
)
def execute_django_task(
    self: Any,
    module_path: str,
    args: list[Any],
    kwargs: dict[str, Any],
    backend: str = "default",
) -> None:
    """The Celery task that runs the Django task at ``module_path``: ``CeleryBackend``
    sends every Django task as this one (see the module's docstring)."""
    task = load_task(module_path)
    base = framework.base_module()
    result = base.TaskResult(
        task=task,
        id=self.request.id,
        status=base.TaskResultStatus.READY,
        enqueued_at=None,
        started_at=None,
        finished_at=None,
        last_attempted_at=None,
        args=args,
        kwargs=kwargs,
        backend=backend,
        errors=[],
        worker_ids=[self.request.hostname or "celery"],
    )
    run_task(task, result)
