"""``store.search``: a user's conversations by title and message text, never another
user's, and an index that is right after every kind of write (a property test against a
scan of the stored items' text); on SQLite with FTS5 and with the LIKE fallback."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from django_agent_sessions import item_views, serialization
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import (
    branches,
    compaction,
    importing,
    removal,
    search,
    search_statements,
)
from django_agent_sessions.store import items as stored_items
from tests.conftest import assistant_message, user_message
from tests.store.helpers import encode, item_ids, scope, user, write

pytestmark = pytest.mark.django_db

WORDS = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]


def output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def found(owner_id: Any, query: str) -> set[tuple[str, int | None]]:
    return {(hit.session_id, hit.item_id) for hit in search.search(owner_id, query, limit=500)}


def test_two_users_sharing_words_never_see_each_other() -> None:
    ann, bob = user("ann"), user("bob")
    write("ann-1", user_message("the quarterly report"), owner_id=ann.pk, title="Report")
    write("bob-1", user_message("my quarterly report"), owner_id=bob.pk, title="Report too")
    assert {hit.session_id for hit in search.search(ann.pk, "quarterly report")} == {"ann-1"}
    assert {hit.session_id for hit in search.search(bob.pk, "report")} == {"bob-1"}
    assert search.search(None, "report") == []


def test_titles_and_both_sides_of_a_conversation_are_found_tool_outputs_not() -> None:
    ann = user("ann")
    write(
        "trip",
        user_message("Plan a walk in the Alps"),
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        output("c1", "Sunny over the Alps"),
        assistant_message("The Alps are sunny: go on Tuesday"),
        owner_id=ann.pk,
        title="Mountain trip",
    )
    ids = list(SessionItem.objects.order_by("id").values_list("id", flat=True))
    assert found(ann.pk, "alps") == {("trip", ids[0]), ("trip", ids[3])}
    assert found(ann.pk, "mountain") == {("trip", None)}
    assert found(ann.pk, "tues") == {("trip", ids[3])}  # words are found by their start
    assert found(ann.pk, "sunny tuesday") == {("trip", ids[3])}  # every word must occur
    assert found(ann.pk, "sunny nowhere") == set()
    assert search.search(ann.pk, "  ?!  ") == []


def test_tool_outputs_are_found_with_the_setting_after_a_reindex() -> None:
    ann = user("ann")
    write("tools", output("c1", "the forecast says hail"), owner_id=ann.pk)
    assert found(ann.pk, "hail") == set()
    with override_settings(AGENT_SESSIONS={"SEARCH": {"TOOL_OUTPUTS": True}}):
        call_command("agent_sessions_reindex", stdout=open("/dev/null", "w"))  # noqa: SIM115
        assert len(found(ann.pk, "hail")) == 1
    call_command("agent_sessions_reindex", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert found(ann.pk, "hail") == set()


def test_search_switched_off_keeps_no_text_and_finds_titles_only() -> None:
    ann = user("ann")
    with override_settings(AGENT_SESSIONS={"SEARCH": {"ENABLED": False}}):
        write("off", user_message("a quiet pistachio"), owner_id=ann.pk, title="pistachio day")
        assert list(SessionItem.objects.values_list("search_text", flat=True)) == [""]
        assert found(ann.pk, "pistachio") == {("off", None)}
        assert search.conversations_with("quiet", using="default") == []
    write("off", user_message("a loud pistachio"), owner_id=ann.pk)  # on again
    assert found(ann.pk, "pistachio") == {("off", None), ("off", item_ids("off")[1])}
    call_command("agent_sessions_reindex", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert len(found(ann.pk, "pistachio")) == 3


def test_a_snippet_marks_the_matches_as_plain_text() -> None:
    ann = user("ann")
    text = "word " * 30 + "<b>Needle</b> in a haystack, needles everywhere " + "tail " * 40
    write("snip", user_message(text), owner_id=ann.pk)
    [hit] = search.search(ann.pk, "needle")
    assert [segment.text for segment in hit.snippet if segment.match] == ["Needle", "needle"]
    shown = "".join(segment.text for segment in hit.snippet)
    assert "<b>Needle</b>" in shown
    assert (shown[0], shown[-1]) == ("…", "…")
    assert len(shown) <= search.SNIPPET_CHARS + 2


def test_a_query_is_never_syntax() -> None:
    ann = user("ann")
    write("odd", user_message('50% off: it\'s "quoted" & more_words'), owner_id=ann.pk)
    for query in ['"', "50%", "it's", "a & | ! :*", "more_words", "NEAR(", "*", "_"]:
        search.search(ann.pk, query)  # no error, whatever it finds
    assert len(found(ann.pk, "quoted")) == 1


# The property: after any sequence of writes, search equals a scan of what is stored.


def brute_force(owner_id: Any, query: str) -> set[tuple[str, int | None]]:
    terms = search.terms_of(query)
    expected: set[tuple[str, int | None]] = set()
    for conversation in AgentSession.objects.filter(owner_id=owner_id):
        if all(term in conversation.title.lower() for term in terms):
            expected.add((conversation.session_id, None))
        for item_id, payload in conversation.items.values_list("id", "payload"):
            words = item_views.search_text(serialization.loads(payload)).lower().split()
            if all(any(word.startswith(term) for word in words) for term in terms):
                expected.add((conversation.session_id, item_id))
    return expected


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))


def random_items(rng: random.Random) -> list[Any]:
    made: list[Any] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(3)
        text = sentence(rng)
        if kind == 0:
            made.append(user_message(text))
        elif kind == 1:
            made.append(assistant_message(text))
        else:
            made.append(output(f"c{rng.randrange(99)}", text))
    return made


def step(rng: random.Random, owners: list[Any], serial: list[int]) -> None:
    owner = rng.choice(owners)
    names = list(AgentSession.objects.filter(owner_id=owner).values_list("session_id", flat=True))
    name = rng.choice(names) if names and rng.random() < 0.8 else f"s{owner}-{len(serial)}"
    serial.append(1)
    where = scope(name, owner)
    action = rng.randrange(11)
    if action <= 2 or name not in names:
        title = sentence(rng) if rng.random() < 0.3 else ""
        stored_items.append_items(where, encode(*random_items(rng)), title)
    elif action == 3:
        stored_items.pop_newest(where)
    elif action == 4:
        stored_items.clear(where)
    elif action == 5:
        compaction.replace_all(where, encode(*random_items(rng)), None)  # _atomic_replace_items
    elif action == 8:
        newest = compaction.snapshot(where, rng.randint(1, 3))
        compaction.replace_suffix(where, newest.row_ids, encode(*random_items(rng)), None, 1)
    elif action == 9:
        stored_items.take_back_last_turn(where)
    elif action == 10:
        branches.fork(where, f"fork-{len(serial)}", None)
    elif action == 6:
        pk = AgentSession.objects.get(session_id=name).pk
        if rng.random() < 0.5:
            removal.delete_conversations([pk])
        else:
            AgentSession.objects.filter(pk=pk).update(updated_at="2000-01-01T00:00:00Z")
            removal.prune(timedelta(days=1))
    elif action == 7:
        imported = f"imp-{len(serial)}"
        batch = [(AgentSession().created_at, e) for e in encode(*random_items(rng))]
        conversation = importing.Conversation(
            session_id=imported,
            owner=AgentSession.owner.field.related_model.objects.get(pk=owner).username,
            title=sentence(rng),
            metadata={},
            created_at=batch[0][0],
            updated_at=batch[0][0],
            items=batch,
        )
        importing.insert([conversation], conversation_batch=10, item_batch=10)


@pytest.mark.parametrize("mode", ["index", "small-batches", "like-fallback"])
def test_search_equals_a_scan_after_random_writes(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode == "like-fallback":
        if connection.vendor != "sqlite":
            pytest.skip("the LIKE fallback is SQLite's")
        monkeypatch.setattr(search, "has_fts", lambda connection: False)
    if mode == "small-batches":  # SQLite's index takes a batch every 3 items, PostgreSQL's
        monkeypatch.setattr(search_statements, "PENDING_ITEMS", 3)  # search asks the index
        monkeypatch.setattr(search_statements, "RECENT_ITEMS", 3)  # past 3 newest items
        search.install(connection)
    owners = [user(f"user{n}").pk for n in range(3)]
    rng, serial = random.Random(35), list[int]()
    for round_ in range(80):
        step(rng, owners, serial)
        if round_ % 8 == 7:
            for query in ("apple", "ban", "cherry fig", "grape hazel elder", "zzz"):
                expected = {owner: brute_force(owner, query) for owner in owners}
                for owner in owners:
                    assert found(owner, query) == expected[owner], query
                assert_staff_find(query, set().union(*expected.values()))


def assert_staff_find(query: str, expected: set[tuple[str, int | None]]) -> None:
    """The admin's searches find what a scan finds: conversations, and items in each."""
    items = {(session_id, item) for session_id, item in expected if item is not None}
    pks = dict(AgentSession.objects.values_list("session_id", "pk"))
    listed = search.conversations_with(query, using="default")
    assert sorted(listed) == sorted({pks[session_id] for session_id, _ in items}), query
    for session_id, pk in pks.items():
        hits = search.in_conversation(pk, query, 500, using="default")
        assert {(session_id, hit.item_id) for hit in hits} == {
            found for found in items if found[0] == session_id
        }, query


def test_reindex_rebuilds_a_lost_index() -> None:
    ann = user("ann")
    write("lost", user_message("a lost word"), owner_id=ann.pk)
    search.uninstall(connection)
    SessionItem.objects.update(search_text="")
    call_command("agent_sessions_reindex", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert len(found(ann.pk, "lost")) == 1
    write("lost", user_message("and a found one"), owner_id=ann.pk)
    assert len(found(ann.pk, "found")) == 1


def test_staff_find_anyones_conversations_by_what_was_said() -> None:
    ann, bob = user("ann"), user("bob")
    first = write("ann-x", user_message("a shared word"), owner_id=ann.pk)
    second = write("bob-x", assistant_message("the shared word"), owner_id=bob.pk)
    write("nobody", user_message("other things"))
    found_pks = search.conversations_with("shared", using="default")
    assert sorted(found_pks) == sorted([first.pk, second.pk])
    assert search.conversations_with("", using="default") == []


@pytest.mark.parametrize("like", [False, True], ids=["index", "like-fallback"])
def test_staff_find_in_one_conversation_in_transcript_order(like: bool) -> None:
    if like:
        if connection.vendor != "sqlite":
            pytest.skip("the LIKE fallback is SQLite's")
        search.uninstall(connection)  # rolled back with the test's transaction
    ann, bob = user("ann"), user("bob")
    shared = ("a shared word", "nothing", "shared again, shared")
    mine = write(
        "ann-x",
        user_message(shared[0]),
        assistant_message(shared[1]),
        assistant_message(shared[2]),
        owner_id=ann.pk,
    )
    write("bob-x", user_message("shared too"), owner_id=bob.pk)
    ids = list(SessionItem.objects.filter(session=mine).order_by("id").values_list("id", flat=True))
    hits = search.in_conversation(mine.pk, "Shared", using="default")
    assert [(hit.item_id, hit.role) for hit in hits] == [(ids[0], "user"), (ids[2], "assistant")]
    assert hits[1].snippet == search.snippet(shared[2], ["shared"])
    assert [
        hit.item_id for hit in search.in_conversation(mine.pk, "shared", 1, using="default")
    ] == [ids[0]]
    assert search.in_conversation(mine.pk, "shared nothing", using="default") == []
    assert search.in_conversation(mine.pk, "?!", using="default") == []
