"""The suite's ``flush`` (tests/fast_flush) leaves what Django's own flush leaves."""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command, get_commands
from django.core.management.commands.flush import Command as DjangoFlush
from django.db import connection
from django.db.models.signals import post_migrate
from django.test.utils import CaptureQueriesContext

from django_agent_sessions.models import AgentSession, SessionItem

pytestmark = pytest.mark.django_db(transaction=True)

#: What a transactional test's teardown passes (django.test.TransactionTestCase).
TEARDOWN = {
    "verbosity": 0,
    "interactive": False,
    "reset_sequences": False,
    "allow_cascade": False,
    "inhibit_post_migrate": False,
}


def every_row() -> dict[str, list[tuple[Any, ...]]]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        rows = {}
        for name in sorted(tables):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(name)} ORDER BY 1")
            rows[name] = cursor.fetchall()
    return rows


def write_a_little_of_everything() -> None:
    user = User.objects.create_user("flushed", password="pw")
    group = Group.objects.create(name="readers")
    group.permissions.add(Permission.objects.first())
    user.groups.add(group)
    conversation = AgentSession.objects.create(session_id="conv-flushed", owner=user)
    SessionItem.objects.create(session=conversation, payload='{"role": "user"}')
    LogEntry.objects.create(
        user=user,
        content_type=ContentType.objects.get_for_model(AgentSession),
        object_id=str(conversation.pk),
        object_repr="conv-flushed",
        action_flag=ADDITION,
    )


def flush_statements() -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        call_command("flush", **TEARDOWN)
    return [query["sql"].split()[0].upper() for query in queries.captured_queries]


def test_flush_is_the_suites_own() -> None:
    assert get_commands()["flush"] == "tests.fast_flush"


def test_it_leaves_the_rows_djangos_flush_leaves_without_making_any_again() -> None:
    call_command(DjangoFlush(), **TEARDOWN)
    call_command("flush", **TEARDOWN)  # the kept rows' fingerprint, after a full flush
    after_django = every_row()
    assert after_django["django_content_type"]
    assert after_django["auth_permission"]

    write_a_little_of_everything()
    statements = flush_statements()

    assert every_row() == after_django
    assert "TRUNCATE" not in statements
    assert "INSERT" not in statements


def test_a_content_type_a_test_added_makes_it_djangos_own_flush() -> None:
    call_command("flush", **TEARDOWN)
    call_command("flush", **TEARDOWN)  # fast: the fingerprint is this process's
    types = set(ContentType.objects.values_list("app_label", "model"))
    ContentType.objects.create(app_label="elsewhere", model="added")

    statements = flush_statements()

    assert set(ContentType.objects.values_list("app_label", "model")) == types
    assert "INSERT" in statements  # post_migrate made the content types again


def test_the_content_types_cache_is_cleared_as_post_migrate_clears_it() -> None:
    call_command("flush", **TEARDOWN)
    ContentType.objects.get_for_model(AgentSession)
    assert ContentType.objects._cache  # type: ignore[attr-defined]

    call_command("flush", **TEARDOWN)

    assert not ContentType.objects._cache  # type: ignore[attr-defined]


def test_other_uses_are_djangos_own_flush() -> None:
    call_command("flush", **TEARDOWN)
    with CaptureQueriesContext(connection) as queries:
        call_command("flush", **{**TEARDOWN, "inhibit_post_migrate": True})
    assert ContentType.objects.count() == 0  # as Django's: nothing made again
    assert not any(query["sql"].startswith("INSERT") for query in queries.captured_queries)

    call_command("flush", **TEARDOWN)  # the next teardown makes them again
    assert ContentType.objects.exists()
    assert Permission.objects.exists()


#: Receivers that act only on a migration plan; a flush sends none (Django 6 renames
#: permissions after a ``RenameModel`` this way).
PLAN_ONLY = {"rename_permissions_after_model_rename"}


def post_migrate_receivers() -> list[Any]:
    return list(post_migrate._live_receivers(None)[0])


def test_post_migrate_makes_only_content_types_and_permissions() -> None:
    """Why the kept tables are enough: nothing else answers ``post_migrate``."""
    receivers = {receiver.__name__ for receiver in post_migrate_receivers()}
    assert receivers - PLAN_ONLY == {"create_contenttypes", "create_permissions"}


def test_the_plan_only_receivers_write_nothing_without_a_plan() -> None:
    plan_only = [r for r in post_migrate_receivers() if r.__name__ in PLAN_ONLY]
    with CaptureQueriesContext(connection) as queries:
        for receiver in plan_only:
            for app_config in apps.get_app_configs():
                receiver(app_config=app_config, verbosity=0, using="default", plan=None)
    assert queries.captured_queries == []
