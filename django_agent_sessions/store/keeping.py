"""How a person keeps their conversations: pinned, archived, filtered by agent.

The sidebar's list is one query: the person's conversations, pinned ones first, then
the most recently active; archived ones only when asked for; with an agent named, only
the conversations that agent ran in (a conversation has no agent of its own: each run
records the agent that ran it, and any of them may). Pinning and archiving are one
``UPDATE`` each, of one row the person owns: a statement is atomic by itself, and it
touches neither the items nor ``updated_at`` (keeping is not activity).

The search leaves archived conversations out the same way (``search_kept``), over the
search of ``store.search``, which knows nothing of archives; and temporary chats always
(``store.temporary``), as the list does.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from django_agent_sessions.models import AgentRun, AgentSession
from django_agent_sessions.store import search
from django_agent_sessions.store.owned import NotFound

#: The most distinct agents the filter offers (a person's runs rarely use more).
MAX_AGENTS = 50
#: The admin's agent filter offers the agents of this many newest runs.
RECENT_RUNS = 10_000
# Searches asked for while archived conversations take up the results (see search_kept).
_SEARCH_ROUNDS = 3


def listed(
    owner_id: Any, limit: int, *, archived: bool = False, agent: str | None = None
) -> list[dict[str, Any]]:
    """The owner's conversations, pinned first, then most recently active: each a dict
    of ``session_id``, ``title``, ``updated_at``, ``pinned`` and ``archived_at``.
    ``archived``: archived ones too (else they are left out); ``agent``: only those
    with a run of that agent."""
    rows = AgentSession.objects.filter(owner_id=owner_id, temporary=False)
    if not archived:
        rows = rows.filter(archived_at__isnull=True)
    if agent:
        rows = with_agent(rows, agent)
    rows = rows.order_by("-pinned", "-updated_at")
    fields = ("session_id", "title", "updated_at", "pinned", "archived_at")
    return list(rows.values(*fields)[:limit])


def agents_of(owner_id: Any) -> list[str]:
    """The names of the agents that ran in the owner's conversations, sorted."""
    names = (
        AgentRun.objects.filter(session__owner_id=owner_id, session__temporary=False)
        .exclude(agent_name="")
        .order_by("agent_name")
        .values_list("agent_name", flat=True)
        .distinct()
    )
    return list(names[:MAX_AGENTS])


def with_agent(rows: QuerySet[AgentSession], agent: str) -> QuerySet[AgentSession]:
    """The conversations of ``rows`` with a run of ``agent`` (an ``EXISTS`` that the
    runs' (conversation, start) index answers)."""
    runs = AgentRun.objects.filter(session_id=OuterRef("pk"), agent_name=agent)
    filtered: QuerySet[AgentSession] = rows.filter(Exists(runs))
    return filtered


def recent_agents(runs: int = RECENT_RUNS) -> list[str]:
    """The names of the agents of the newest ``runs`` runs, anyone's, sorted (the
    admin's filter: a ``DISTINCT`` over every run would read the whole table)."""
    newest = AgentRun.objects.order_by("-started_at").values("pk")[:runs]
    names = (
        AgentRun.objects.filter(pk__in=newest)
        .exclude(agent_name="")
        .order_by("agent_name")
        .values_list("agent_name", flat=True)
        .distinct()
    )
    return list(names[:MAX_AGENTS])


def keep(
    session_id: str, owner_id: Any, *, pinned: bool | None = None, archived: bool | None = None
) -> None:
    """Pin or unpin, archive or unarchive the owner's conversation (None: unchanged), in
    one ``UPDATE``. Raises ``NotFound`` for a conversation that is missing or someone
    else's (also when nothing is asked: the caller learns whether it may)."""
    changes: dict[str, Any] = {}
    if pinned is not None:
        changes["pinned"] = pinned
    if archived is not None:
        changes["archived_at"] = timezone.now() if archived else None
    rows = AgentSession.objects.filter(session_id=session_id, owner_id=owner_id)
    if not (rows.update(**changes) if changes else rows.exists()):
        raise NotFound(session_id)


def search_kept(
    owner_id: Any, query: str, limit: int = 20, *, archived: bool = False
) -> list[search.Hit]:
    """``store.search.search``, without the owner's temporary chats, nor archived
    conversations unless ``archived``. Their hits are dropped after the search, so it
    asks for more while they take up the results (at most ``_SEARCH_ROUNDS`` searches,
    each four times larger): the hits are never theirs, and rarely fewer."""
    hiding = Q(temporary=True) if archived else Q(temporary=True) | Q(archived_at__isnull=False)
    hidden = set(
        AgentSession.objects.filter(hiding, owner_id=owner_id).values_list("session_id", flat=True)
    )
    asked = limit
    for _round in range(_SEARCH_ROUNDS):
        hits = search.search(owner_id, query, asked)
        kept = [hit for hit in hits if hit.session_id not in hidden]
        if len(kept) >= limit or len(hits) < asked or not hidden:
            break
        asked *= 4
    return kept[:limit]
