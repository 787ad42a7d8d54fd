"""Share links' pages on Django's test client: the authorization matrix, cell by cell,
with no leak; what a page shows (tools hidden by default, the snapshot), the file scope,
and what "continue as a copy" makes."""

from __future__ import annotations

import pytest
from django.test import Client

from django_agent_sessions.models import AgentSession, SharedLink
from tests import sharing_matrix as matrix
from tests.chat.helpers import add, items_of, logged_in
from tests.conftest import user_message

pytestmark = pytest.mark.django_db(transaction=True)


def _ask(client: Client) -> matrix.Ask:
    def ask(method: str, path: str) -> matrix.Answer:
        response = client.get(path) if method == "GET" else client.post(path)
        streamed = getattr(response, "streaming_content", None)
        body = b"".join(streamed) if streamed is not None else response.content
        return matrix.Answer(response.status_code, response.get("Location", ""), body)

    return ask


@pytest.mark.parametrize("mode", matrix.MODES)
def test_the_authorization_matrix(mode, settings, make_user, file_storage):
    settings.AGENT_SESSIONS = {**getattr(settings, "AGENT_SESSIONS", {}), "SHARE_LINKS": mode}
    owner, other, staff = make_user("owner"), make_user("other"), make_user("staff")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    row, attachment_id = matrix.conversation(owner)
    clients = {
        "owner": logged_in(owner),
        "other": logged_in(other),
        "anonymous": Client(),
        "staff": logged_in(staff),
    }
    for state in matrix.STATES:
        for person in matrix.PEOPLE:
            for action in matrix.ACTIONS:
                link = matrix.link_in(row, owner, state)  # a fresh one: revoke changes it
                method, path = matrix.paths(link.token, attachment_id)[action]
                answer = _ask(clients[person])(method, path)
                cell = (mode, state, person, action)
                want = matrix.expected(*cell)
                matrix.check(answer, want, action, cell)
                if action == "revoke" and want == matrix.OK:
                    link.refresh_from_db()
                    assert link.revoked_at is not None
                    view = matrix.paths(link.token, attachment_id)["view"][1]
                    assert _ask(clients["other"])("GET", view).status == 404


@pytest.fixture
def public(settings):
    settings.AGENT_SESSIONS = {**getattr(settings, "AGENT_SESSIONS", {}), "SHARE_LINKS": "public"}


def test_the_page_shows_the_snapshot_without_tools_and_tells_robots_to_keep_out(
    public, make_user, file_storage
):
    owner = make_user("owner")
    row, _attachment = matrix.conversation(owner)
    link = matrix.link_in(row, owner, "live")
    add("shared-talk", owner, user_message("Later words, after the snapshot"))
    response = Client().get(matrix.paths(link.token, 0)["view"][1])
    page = response.content.decode()
    assert matrix.SECRET in page
    assert matrix.TITLE in page
    assert matrix.TOOL_SECRET not in page
    assert "lookup" not in page  # the tool's name neither
    assert "Later words" not in page
    assert '<meta name="robots" content="noindex, nofollow">' in page
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    policy = response["Content-Security-Policy"]
    assert "default-src 'none'" in policy
    assert "script-src" not in policy  # the page runs no script at all
    assert "<script" not in page


def test_a_link_that_shows_tools_and_follows_the_conversation(public, make_user, file_storage):
    owner = make_user("owner")
    row, _attachment = matrix.conversation(owner)
    link = matrix.link_in(row, owner, "live")
    SharedLink.objects.filter(pk=link.pk).update(up_to_item_id=None, show_tools=True)
    add("shared-talk", owner, user_message("Later words"))
    page = Client().get(matrix.paths(link.token, 0)["view"][1]).content.decode()
    assert matrix.TOOL_SECRET in page
    assert "Later words" in page


def test_files_only_through_the_links_own_scope(public, make_user, file_storage):
    owner = make_user("owner")
    row, attachment_id = matrix.conversation(owner)
    link = matrix.link_in(row, owner, "live")
    # A file sent after the snapshot, and one of another conversation of the owner's.
    matrix.with_file(owner, "shared-talk", matrix.files_message("later", image=matrix.png(4, 4)))
    matrix.with_file(owner, "elsewhere", matrix.files_message("other", image=matrix.png(5, 5)))
    later = row.attachments.exclude(pk=attachment_id).get()
    elsewhere = AgentSession.objects.get(session_id="elsewhere").attachments.get()
    viewer = Client()
    assert viewer.get(matrix.paths(link.token, attachment_id)["file"][1]).status_code == 200
    for other_id in (later.pk, elsewhere.pk, attachment_id + 1000):
        assert viewer.get(matrix.paths(link.token, other_id)["file"][1]).status_code == 404
    # Nothing here deletes: the file's URL takes no POST, DELETE or PUT.
    file_url = matrix.paths(link.token, attachment_id)["file"][1]
    assert viewer.post(file_url).status_code == 405
    assert viewer.delete(file_url).status_code == 405
    assert row.attachments.count() == 2


def test_continue_as_a_copy_makes_the_viewers_own_conversation_of_what_was_shown(
    public, make_user, file_storage
):
    owner, viewer = make_user("owner"), make_user("viewer")
    row, _attachment = matrix.conversation(owner)
    link = matrix.link_in(row, owner, "live")
    add("shared-talk", owner, user_message("Later words"))
    response = logged_in(viewer).post(matrix.paths(link.token, 0)["copy"][1])
    assert response.status_code == 302
    new_id = response["Location"].rstrip("/").rsplit("/", 1)[-1]
    copy = AgentSession.objects.get(session_id=new_id)
    assert copy.owner_id == viewer.pk
    assert copy.branched_from_id is None  # the original is not theirs to open
    copied = items_of(new_id)
    assert [item.get("role") for item in copied] == ["user", "assistant"]  # no tools
    assert "Later words" not in str(copied)
    assert copy.attachments.count() == 1  # the shown image, stored again for the copy
    assert logged_in(viewer).get(response["Location"]).status_code == 200
    assert logged_in(owner).get(response["Location"]).status_code == 404  # not the owner's


def test_anonymous_copy_goes_to_the_login_and_back_to_the_page(public, make_user, file_storage):
    owner = make_user("owner")
    row, _attachment = matrix.conversation(owner)
    link = matrix.link_in(row, owner, "live")
    response = Client().post(matrix.paths(link.token, 0)["copy"][1])
    assert response.status_code == 302
    assert f"next=/chat/share/{link.token}/" in response["Location"]
