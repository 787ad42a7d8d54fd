"""The one place that imports Django's Tasks framework: Django 6's ``django.tasks``, or the
``django-tasks`` backport on Django 5.2, and the same names from either."""

from __future__ import annotations

import importlib

import django

from django_agent_sessions import task_backends as framework

EXPECTED = "django.tasks" if django.VERSION >= (6,) else "django_tasks"


def test_the_framework_is_django_tasks_on_django_6_and_the_backport_on_5_2():
    assert framework.framework_module() == EXPECTED
    assert framework.available()


def test_the_helpers_hand_out_the_framework_s_own_objects():
    assert framework.base_module() is importlib.import_module(f"{EXPECTED}.base")
    assert framework.submodule("signals") is importlib.import_module(f"{EXPECTED}.signals")
    backends = importlib.import_module(f"{EXPECTED}.backends.base")
    assert framework.base_backend_class() is backends.BaseTaskBackend
    exceptions = importlib.import_module(f"{EXPECTED}.exceptions")
    # Django 6 renamed the backport's InvalidTaskError.
    expected_error = "InvalidTask" if django.VERSION >= (6,) else "InvalidTaskError"
    assert framework.invalid_task_error() is getattr(exceptions, expected_error)


def test_task_decorates_with_the_framework_s_task_and_backends_resolve(settings):
    framework.submodule("signals")  # its receiver drops the backends cached for TASKS
    immediate = f"{EXPECTED}.backends.immediate.ImmediateBackend"
    settings.TASKS = {"default": {"BACKEND": immediate}}

    decorated = framework.task()(_double)
    assert isinstance(decorated, framework.base_module().Task)
    assert type(framework.task_backends()["default"]).__name__ == "ImmediateBackend"
    assert decorated.enqueue(21).return_value == 42


def _double(number: int) -> int:
    return number * 2


def test_backends_without_workers_are_named_once():
    from django_agent_sessions.task_backends import workerless

    assert workerless("django.tasks.backends.immediate.ImmediateBackend")
    assert workerless("DummyBackend")  # a class's own name, as the run host has it
    assert not workerless("django_tasks_db.DatabaseBackend")
    assert not workerless("django_agent_sessions.task_backends.celery.CeleryBackend")
