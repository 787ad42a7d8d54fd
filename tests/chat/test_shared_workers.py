"""Share links on two real workers sharing the database: the authorization matrix with
each request sent to either worker in turn, and a revoke made on one worker refused at
once by the other (each request checks the token in the database; nothing is cached)."""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import sharing_matrix as matrix
from tests.daphne_workers import Worker, two_workers
from tests.websockets import login_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis, pytest.mark.long(40)]


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is an answer to check, not to follow


_OPENER = urllib.request.build_opener(_Stay)


def asker(worker: Worker, cookie: bytes | None) -> matrix.Ask:
    """Requests as a browser would send them to ``worker``: the person's session cookie,
    and Django's CSRF cookie and header on a POST."""
    csrf = secrets.token_hex(16)  # 32 characters, as Django's own secret

    def ask(method: str, path: str, data: bytes | None = None) -> matrix.Answer:
        cookies = [f"csrftoken={csrf}"] + ([cookie.decode()] if cookie else [])
        headers = {"Cookie": "; ".join(cookies), "X-CSRFToken": csrf}
        body = (data or b"") if method == "POST" else None
        request = urllib.request.Request(worker.url + path, body, headers, method=method)
        try:
            with _OPENER.open(request, timeout=30) as response:
                return matrix.Answer(response.status, "", response.read())
        except urllib.error.HTTPError as error:
            return matrix.Answer(error.code, error.headers.get("Location", ""), error.read())

    return ask


@pytest.fixture(params=["login", "public"])
def workers(request: Any, tmp_path: Path) -> Iterator[tuple[str, list[Worker]]]:
    media = tmp_path / "media"
    settings = request.getfixturevalue("settings")
    settings.MEDIA_ROOT = str(media)
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "SHARE_LINKS": request.param}
    with two_workers(
        tmp_path,
        AGENT_SESSIONS_TEST_AGENT="tests.chat_agent.make_demo_agent",
        AGENT_SESSIONS_TEST_SETTINGS=json.dumps({"SHARE_LINKS": request.param}),
        AGENT_SESSIONS_TEST_MEDIA_ROOT=str(media),
        AGENT_SESSIONS_CHANNEL_PREFIX=f"share-{secrets.token_hex(4)}:",
    ) as started:
        yield request.param, started


def test_the_matrix_across_two_workers_and_revoke_at_once(workers, make_user):
    mode, (a, b) = workers
    owner, other, staff = make_user("owner"), make_user("other"), make_user("staff")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    row, attachment_id = matrix.conversation(owner)
    cookies = {
        "owner": login_cookie(owner),
        "other": login_cookie(other),
        "anonymous": None,
        "staff": login_cookie(staff),
    }
    turn = 0
    for state in matrix.STATES:
        for person in matrix.PEOPLE:
            for action in matrix.ACTIONS:
                link = matrix.link_in(row, owner, state)
                method, path = matrix.paths(link.token, attachment_id)[action]
                worker = (a, b)[turn % 2]
                turn += 1
                answer = asker(worker, cookies[person])(method, path)
                cell = (mode, state, person, action)
                matrix.check(answer, matrix.expected(*cell), action, cell)

    # Made on A, seen on B; revoked on A, refused on B at once, the file and the copy too.
    on_a, on_b = asker(a, cookies["owner"]), asker(b, cookies["other"])
    made = on_a("POST", "/chat/c/shared-talk/share/", b"expires=")
    assert made.status == 200
    token = json.loads(made.body)["token"]
    urls = matrix.paths(token, attachment_id)
    assert on_b("GET", urls["view"][1]).status == 200
    assert on_b("GET", urls["file"][1]).status == 200
    assert on_a("POST", urls["revoke"][1]).status == 302
    for action in ("view", "file", "copy"):
        method, path = urls[action]
        matrix.check(on_b(method, path), matrix.GONE, action, ("revoked on A", action))
