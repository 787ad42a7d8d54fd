"""Find in a transcript: a conversation's matching items above its transcript, each
linking to the page that shows it; escaped snippets, bounds, and who may search."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_agent_sessions.admin import transcript_find
from django_agent_sessions.models import AgentSession, SessionItem
from django_agent_sessions.store import search
from tests.admin.helpers import change_url, staff
from tests.conversations import make_conversation

pytestmark = pytest.mark.django_db


def said(*texts: str) -> list[dict[str, str]]:
    """User and assistant messages, taking turns."""
    return [{"role": ("user", "assistant")[n % 2], "content": text} for n, text in enumerate(texts)]


def item_ids(conversation: AgentSession) -> list[int]:
    return list(SessionItem.objects.filter(session=conversation).values_list("id", flat=True))


def found(client, conversation: AgentSession, query: str, **extra: str):
    response = client.get(change_url(conversation), {"find": query, **extra})
    assert response.status_code == 200
    return response


def hits(response) -> list[int]:
    return [hit.item_id for hit in response.context["transcript_find"].get("hits", [])]


@pytest.fixture(params=["index", "like-fallback"])
def index(request):
    """The index, or (SQLite only) the LIKE scan a SQLite without FTS5 falls back to."""
    if request.param == "like-fallback":
        if connection.vendor != "sqlite":
            pytest.skip("the LIKE fallback is SQLite's")
        search.uninstall(connection)  # rolled back with the test's transaction
    return request.param


def test_matches_are_listed_in_order_never_another_conversations(viewer, index):
    conversation = make_conversation(
        "c-find",
        said("Where is my parcel?", "Hello", "The parcel left today", "Thanks", "Parcels!"),
    )
    other = make_conversation("c-other", said("My parcel is lost too"))
    ids = item_ids(conversation)
    response = found(viewer, conversation, "PARCEL")
    assert hits(response) == [ids[0], ids[2], ids[4]]  # "parcels" starts with "parcel"
    assert not set(hits(response)) & set(item_ids(other))
    assert "3 items match “PARCEL”." in response.text
    assert "Where is my <mark>parcel</mark>?" in response.text
    assert f'href="?find=PARCEL&amp;page=1#item-{ids[2]}"' in response.text
    assert (
        found(viewer, conversation, "parcel today").context["transcript_find"]["hits"][0].item_id
        == ids[2]
    )  # every word must occur
    assert hits(found(viewer, conversation, "arcel")) in ([], [ids[0], ids[2], ids[4]])
    if index == "index":
        assert hits(found(viewer, conversation, "arcel")) == []  # words match by their start


def test_a_match_on_page_two_links_there_and_the_page_shows_it(viewer):
    texts = [f"small talk {n}" for n in range(150)]
    texts[120] = "the needle is here"
    conversation = make_conversation("c-long", said(*texts))
    needle = item_ids(conversation)[120]
    response = found(viewer, conversation, "needle")
    link = f"?find=needle&page=2#item-{needle}"
    assert f'href="{link.replace("&", "&amp;")}"' in response.text
    assert "Assistant, page 2" not in response.text  # item 120 is the user's (even index)
    assert "User, page 2" in response.text
    landed = viewer.get(change_url(conversation) + link.split("#")[0])
    assert landed.context["transcript"]["number"] == 2
    assert f'id="item-{needle}"' in landed.text
    assert hits(landed) == [needle]  # the matches stay listed while reading


def test_html_in_a_message_is_escaped_in_its_snippet(viewer):
    conversation = make_conversation(
        "c-xss", said("<script>alert('parcel')</script> <b>parcel</b>")
    )
    page = found(viewer, conversation, "parcel").text
    snippet = re.search(r'<span class="agent-find-snippet" dir="auto">(.*?)</span>', page)
    assert snippet is not None
    assert snippet.group(1) == (
        "&lt;script&gt;alert(&#x27;<mark>parcel</mark>&#x27;)&lt;/script&gt; "
        "&lt;b&gt;<mark>parcel</mark>&lt;/b&gt;"
    )
    assert "<script>alert" not in page
    assert "<b>parcel" not in page


@pytest.mark.parametrize("query", ["", "   ", "?!", "«»…"])
def test_an_empty_or_punctuation_only_query_lists_nothing(viewer, query):
    conversation = make_conversation("c-find", said("What? Really!", "«Yes»…"))
    response = found(viewer, conversation, query)
    assert hits(response) == []
    assert "agent-find-results" not in response.text
    assert "searched" not in response.context["transcript_find"]
    if query.strip():
        assert "punctuation alone matches nothing" in response.text
    else:
        assert 'role="status"' not in response.text


def test_no_match_says_so(viewer):
    conversation = make_conversation("c-find", said("Hello", "Hi"))
    response = found(viewer, conversation, "parcel <b>")
    assert hits(response) == []
    assert "No item in this conversation matches “parcel &lt;b&gt;”." in response.text
    assert 'value="parcel &lt;b&gt;"' in response.text  # the query stays in the box


def test_at_most_the_limit_is_listed_and_the_page_says_there_are_more(viewer):
    total = transcript_find.LIMIT + 5
    conversation = make_conversation("c-many", said(*(f"parcel {n}" for n in range(total))))
    response = found(viewer, conversation, "parcel")
    assert hits(response) == item_ids(conversation)[: transcript_find.LIMIT]
    limit = transcript_find.LIMIT
    assert f"More than {limit} items match “parcel”; the first {limit} are listed." in (
        response.text
    )
    exactly = make_conversation("c-exact", said(*(["parcel"] * limit)))
    assert f"{limit} items match “parcel”." in found(viewer, exactly, "parcel").text


def test_finding_costs_the_same_queries_for_one_match_or_fifty(viewer):
    one = make_conversation("c-one", said("parcel", *(["other"] * 60)))
    fifty = make_conversation("c-fifty", said(*(["parcel"] * 60)))

    def queries(conversation: AgentSession) -> int:
        with CaptureQueriesContext(connection) as captured:
            found(viewer, conversation, "parcel")
        return len(captured.captured_queries)

    assert len(hits(found(viewer, fifty, "parcel"))) == transcript_find.LIMIT
    assert queries(one) == queries(fifty)


def test_the_form_keeps_the_lists_filters_and_restarts_the_pages(viewer):
    conversation = make_conversation("c-find", said("parcel"))
    response = found(viewer, conversation, "parcel", page="3", _changelist_filters="q=x")
    page = response.text
    kept = '<input type="hidden" form="agent-find" name="_changelist_filters" value="q=x">'
    assert kept in page
    assert 'form="agent-find" name="page"' not in page
    # Not nested in the page's POST form (a browser would submit that one instead): the
    # GET form stands before it, and the fields name it.
    assert page.index('<form id="agent-find" method="get"></form>') < page.index(
        'id="agentsession_form"'
    )
    assert '<input type="search" form="agent-find" id="agent-find-query" name="find"' in page
    assert f"_changelist_filters=q%3Dx#item-{item_ids(conversation)[0]}" in response.text


def test_who_may_find_is_who_may_read_the_conversation(client, viewer):
    conversation = make_conversation("c-find", said("parcel"))
    url = change_url(conversation) + "?find=parcel"
    client.logout()
    response = client.get(url)
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]
    client.force_login(staff("nobody"))
    assert client.get(url).status_code == 403
    client.force_login(staff("items-only", "view_sessionitem", "delete_sessionitem"))
    assert client.get(url).status_code == 403
    client.force_login(staff("viewer2", "view_agentsession"))
    assert hits(client.get(url)) == item_ids(conversation)
