"""Django's Tasks framework, from Django 6 (``django.tasks``) or its backport for 5.2
(``django-tasks``), and the task backends this app adds to it (``celery``).

Everything the app uses of the framework is imported here, once, so that the rest of the
app never asks which Django it runs on. Importing this module needs neither: ``available()``
says whether the framework is installed, and the names are looked up when first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

_FRAMEWORK_MODULES = ("django.tasks", "django_tasks")


def framework_module() -> str | None:
    """``django.tasks`` (Django 6), ``django_tasks`` (the backport on 5.2), or None."""
    for name in _FRAMEWORK_MODULES:
        try:
            if find_spec(name) is not None:
                return name
        except ModuleNotFoundError:  # a parent package missing
            continue
    return None


def available() -> bool:
    return framework_module() is not None


def _framework() -> Any:
    name = framework_module()
    if name is None:
        raise ImportError(
            "Django's Tasks framework is missing: it comes with Django 6; on Django 5.2 "
            'install the backport: pip install "django-agent-sessions[tasks]".'
        )
    return importlib.import_module(name)


def task_backends() -> Any:
    """The framework's ``task_backends`` (the ``TASKS`` setting's backends by alias)."""
    return _framework().task_backends


def task(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """The framework's ``@task`` decorator."""
    return _framework().task(**options)  # type: ignore[no-any-return]


def submodule(name: str) -> Any:
    """The framework's module ``name``: ``base``, ``signals``, ``exceptions``, ..."""
    return importlib.import_module(f"{_framework().__name__}.{name}")


def base_backend_class() -> type[Any]:
    return submodule("backends.base").BaseTaskBackend  # type: ignore[no-any-return]


def base_module() -> Any:
    """The framework's ``base`` module: ``Task``, ``TaskResult``, ``TaskResultStatus``."""
    return submodule("base")


def invalid_task_error() -> type[Exception]:
    """What a backend raises for a task it refuses: ``InvalidTask`` on Django 6,
    ``InvalidTaskError`` in the backport (which Django renamed)."""
    exceptions = submodule("exceptions")
    return getattr(exceptions, "InvalidTask", None) or exceptions.InvalidTaskError  # type: ignore[no-any-return]


# The framework's backends without workers: the immediate one runs a task in the process
# that enqueues it (a web worker), the dummy one never runs it.
WORKERLESS_BACKENDS = ("ImmediateBackend", "DummyBackend")


def workerless(backend_path: str) -> bool:
    """Whether the backend a ``TASKS`` entry names (its dotted path) has no workers."""
    return backend_path.rsplit(".", 1)[-1] in WORKERLESS_BACKENDS
