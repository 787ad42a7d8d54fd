"""``store.sharing``: who makes and revokes a link, what a live link finds, and that a
revoke is seen by the next lookup (nothing is cached)."""

from __future__ import annotations

import pytest

from django_agent_sessions.models import AgentSession, SharedLink
from django_agent_sessions.store import sharing
from django_agent_sessions.store.owned import NotFound
from tests.chat.helpers import add
from tests.conftest import assistant_message, user_message

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_snapshot_link_up_to_the_newest_item(make_user):
    owner = make_user("owner")
    add("talk", owner, user_message("Hi"), assistant_message("Hello"))
    link = sharing.create_link(owner.pk, "talk")
    newest = AgentSession.objects.get(session_id="talk").items.order_by("-id").first()
    assert newest is not None
    assert link.up_to_item_id == newest.pk
    assert not link.show_tools
    assert sharing.create_link(owner.pk, "talk", follow=True).up_to_item_id is None


def test_only_the_owner_shares_and_never_an_empty_or_temporary_chat(make_user):
    owner, other = make_user("owner"), make_user("other")
    add("talk", owner, user_message("Hi"))
    with pytest.raises(NotFound):
        sharing.create_link(other.pk, "talk")
    with pytest.raises(NotFound):
        sharing.create_link(None, "talk")
    AgentSession.objects.create(session_id="empty", owner=owner)
    with pytest.raises(sharing.NotShareable):
        sharing.create_link(owner.pk, "empty")
    AgentSession.objects.filter(session_id="talk").update(temporary=True)
    with pytest.raises(sharing.NotShareable):
        sharing.create_link(owner.pk, "talk")


def test_revoke_is_the_creators_and_the_next_lookup_sees_it(make_user):
    owner, other = make_user("owner"), make_user("other")
    add("talk", owner, user_message("Hi"))
    link = sharing.create_link(owner.pk, "talk")
    assert sharing.find(link.token) is not None
    assert not sharing.revoke(other.pk, link.token)
    assert sharing.find(link.token) is not None
    assert sharing.revoke(owner.pk, link.token)
    assert sharing.find(link.token) is None
    first = SharedLink.objects.get().revoked_at
    assert sharing.revoke(owner.pk, link.token)  # again: the first time stays
    assert SharedLink.objects.get().revoked_at == first
    assert [row["live"] for row in sharing.links_of(owner.pk)] == [False]
    assert sharing.links_of(other.pk) == []


def test_unknown_and_absurd_tokens_find_nothing():
    assert sharing.find("") is None
    assert sharing.find("x" * 500) is None
    assert sharing.find("no-such-token") is None
    assert sharing.shared_file("no-such-token", 1) is None
    assert not sharing.continue_as_copy("no-such-token", 1, "new")


def test_revoke_all_counts_only_live_ones(make_user):
    owner = make_user("owner")
    add("talk", owner, user_message("Hi"))
    for _ in range(3):
        sharing.create_link(owner.pk, "talk")
    assert sharing.revoke_all(SharedLink.objects.all()) == 3
    assert sharing.revoke_all(SharedLink.objects.all()) == 0


def test_what_a_link_shows_tools_only_when_asked_never_reasoning_or_instructions(make_user):
    owner = make_user("owner")
    add(
        "talk",
        owner,
        {"role": "system", "content": "Secret instructions"},
        user_message("Hi"),
        {"type": "reasoning", "id": "r1", "summary": [{"type": "summary_text", "text": "Hm"}]},
        {"type": "function_call", "call_id": "c1", "name": "look", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
        assistant_message("Hello"),
    )
    hidden = sharing.find(sharing.create_link(owner.pk, "talk").token)
    shown = sharing.find(sharing.create_link(owner.pk, "talk", show_tools=True).token)
    assert hidden is not None
    assert shown is not None

    def types(found: sharing.Shared) -> list[str]:
        kinds = AgentSession.objects.get(session_id="talk").items.order_by("id")
        by_id = dict(kinds.values_list("id", "item_type"))
        return [by_id[item_id] for item_id, _at, _payload in sharing.shown_rows(found)]

    assert types(hidden) == ["message", "message"]
    assert types(shown) == ["message", "function_call", "function_call_output", "message"]
