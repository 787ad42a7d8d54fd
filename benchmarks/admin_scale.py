"""Admin timing on 100,000 conversations and 1,000,000 items (PostgreSQL).

A manual measurement, not part of the test suite. It fills a database of its own with
SQL (a few seconds), then times admin pages through Django's test client and counts
their queries::

    createdb admin_scale   # on the server PG* points at
    AGENT_SESSIONS_TEST_DB=postgres AGENT_SESSIONS_DB_NAME=admin_scale \\
        PYTHONPATH=. python benchmarks/admin_scale.py

The last step deletes the long conversation, so drop the database afterwards
(``dropdb admin_scale``) before running it again.
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import reverse  # noqa: E402

from django_agent_sessions.models import AgentSession  # noqa: E402

CONVERSATIONS = 100_000
ITEMS_EACH = 10
LONG_ITEMS = 20_000
USERS = 1_000

FILL = [
    f"""INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email,
        is_staff, is_active, date_joined)
    SELECT '!', false, 'user' || g, '', '', 'user' || g || '@example.com', false, true, now()
    FROM generate_series(1, {USERS}) g""",
    f"""INSERT INTO django_agent_sessions_agentsession
        (session_id, owner_id, title, metadata, item_count, created_at, updated_at)
    SELECT 'conv-' || g,
        CASE WHEN g % 3 = 0 THEN NULL
             ELSE (SELECT min(id) FROM auth_user WHERE username LIKE 'user%%') + g % {USERS} END,
        'Conversation number ' || g, '{{}}', {ITEMS_EACH},
        now() - make_interval(secs => g * 300 + 60), now() - make_interval(secs => g * 300)
    FROM generate_series(1, {CONVERSATIONS}) g""",
    f"""INSERT INTO django_agent_sessions_sessionitem
        (session_id, payload, item_type, role, call_id, preview, created_at)
    SELECT s.id,
        '{{"role":"user","content":"message ' || n || ' of ' || s.session_id ||
        ': a typical question of a typical length, asked by a typical user."}}',
        'message', 'user', '', 'message ' || n, s.created_at
    FROM django_agent_sessions_agentsession s CROSS JOIN generate_series(1, {ITEMS_EACH}) n
    ORDER BY s.id, n""",
    f"""INSERT INTO django_agent_sessions_sessionitem
        (session_id, payload, item_type, role, call_id, preview, created_at)
    SELECT s.id, '{{"role":"user","content":"long conversation message ' || n || '"}}',
        'message', 'user', '', 'message ' || n, now()
    FROM django_agent_sessions_agentsession s CROSS JOIN generate_series(1, {LONG_ITEMS}) n
    WHERE s.session_id = 'conv-1' ORDER BY n""",
    f"""UPDATE django_agent_sessions_agentsession SET item_count = {ITEMS_EACH + LONG_ITEMS}
    WHERE session_id = 'conv-1'""",
    "ANALYZE",
]


def fill() -> None:
    if AgentSession.objects.exists():
        return
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for sql in FILL:
            cursor.execute(sql)
    print(f"filled in {time.perf_counter() - started:.1f} s")


def measure(
    client: Client, label: str, url: str, method: str = "get", runs: int = 5, **data: object
) -> None:
    timings = []
    for _ in range(runs):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = getattr(client, method)(url, data) if data else getattr(client, method)(url)
            if hasattr(response, "streaming_content"):
                b"".join(response.streaming_content)
            timings.append(time.perf_counter() - started)
        assert response.status_code in (200, 302), (label, response.status_code)
    slowest = max(captured.captured_queries, key=lambda q: float(q["time"]))
    print(
        f"{label:<44} {statistics.median(timings) * 1000:7.1f} ms  {len(captured):2d} queries"
        f"  (slowest query {float(slowest['time']) * 1000:.1f} ms)"
    )


def main() -> None:
    call_command("migrate", verbosity=0)
    fill()
    admin, _ = User.objects.get_or_create(
        username="bench-admin", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(admin)
    changelist = reverse("admin:django_agent_sessions_agentsession_changelist")
    long = AgentSession.objects.get(session_id="conv-1")
    change = reverse("admin:django_agent_sessions_agentsession_change", args=[long.pk])
    delete = reverse("admin:django_agent_sessions_agentsession_delete", args=[long.pk])
    print(f"{AgentSession.objects.count()} conversations")
    measure(client, "changelist, first page", changelist)
    measure(client, "changelist, page 1000", changelist + "?p=1000")
    measure(client, "changelist, search 'conv-4242'", changelist + "?q=conv-4242")
    measure(client, "changelist, search owner 'user42@example'", changelist + "?q=user42@example")
    measure(client, "changelist, no owner", changelist + "?has_owner=no")
    measure(
        client,
        "changelist, last 7 days",
        changelist + "?updated_at__gte=2026-11-22+00:00:00%2B00:00",
    )
    measure(client, "transcript of 20,010 items, page 1", change)
    measure(client, "transcript of 20,010 items, last page", change + "?page=201")
    measure(client, "delete confirmation, 20,010 items", delete)
    measure(
        client,
        "export_json action, 20,010 items",
        changelist,
        method="post",
        action="export_json",
        _selected_action=[long.pk],
    )
    measure(client, "delete 20,010 items (POST, once)", delete, method="post", runs=1, post="yes")


if __name__ == "__main__":
    main()
