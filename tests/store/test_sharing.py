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
