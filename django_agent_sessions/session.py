"""``DjangoSession``: the Agents SDK ``Session`` protocol on the Django ORM."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agents.memory.session import SessionABC, _CompactionSnapshot
from agents.memory.session_settings import (
    SessionSettings,
    coerce_session_settings,
    resolve_session_limit,
)
from django.db import router

from django_agent_sessions import serialization, telemetry
from django_agent_sessions.conf import app_settings
from django_agent_sessions.files import inline
from django_agent_sessions.files import storage as file_storage
from django_agent_sessions.models import AUTOMATIC_TITLE_CHARS, SESSION_ID_MAX_LENGTH, AgentSession
from django_agent_sessions.store import branches, bridge, compaction
from django_agent_sessions.store import items as stored_items

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.run_context import RunContextWrapper


class DjangoSession(SessionABC):
    """Conversation history for one ``session_id``, stored through the Django ORM.

    Subclasses the SDK's ``SessionABC`` (so it is an ``agents.memory.Session`` and fits
    every SDK wrapper annotated with ``SessionABC``, such as ``EncryptedSession``); pass
    it as ``session=`` to ``Runner.run``, ``Runner.run_streamed`` and ``Runner.run_sync``.

    Every method takes the SDK's context-aware call shape: the Runner passes
    ``wrapper=`` (the run's ``RunContextWrapper``) to sessions whose four methods accept
    it. DjangoSession accepts it and does not use it: the owner is fixed when the
    session is constructed and never comes from the run context (see the README).
    Each method is one hop into one transaction (see ``bridge``); it holds no
    per-event-loop state, so one instance may be used from several threads and loops.

    Args:
        session_id: The conversation's id: a non-empty ``str`` of at most 255 characters.
        owner: A saved user. The first write creates the conversation owned by this
            user; if it exists and belongs to anyone else (or to nobody), every method
            raises ``SessionOwnershipError`` and reads and writes nothing. ``None`` means
            trusted server code and skips the check.
        session_settings: ``SessionSettings`` or a dict of its fields; its ``limit`` is
            the default for ``get_items``.
        using: Database alias. Defaults to the router's write database for the app's
            models; reads go there too, so a run always sees its own writes.
        offload_chars: Inline file data longer than this many characters is stored as
            a file (see ``add_items``). Defaults to
            ``AGENT_SESSIONS["ATTACHMENTS"]["OFFLOAD_CHARS"]``; the chat passes 0 for a
            message with attachments, so that every file a person gave is a stored file.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        *,
        owner: Any = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        using: str | None = None,
        offload_chars: int | None = None,
    ) -> None:
        self.session_id = _validated_session_id(session_id)
        self.offload_chars = offload_chars
        self.owner_id = _owner_pk(owner)
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.using = using or router.db_for_write(AgentSession)

    def _offload_threshold(self) -> int:
        if self.offload_chars is not None:
            return self.offload_chars
        return int(file_storage.setting("OFFLOAD_CHARS"))

    def __repr__(self) -> str:
        return f"<DjangoSession {self.session_id!r} owner_id={self.owner_id!r}>"

    @property
    def _scope(self) -> stored_items.Scope:
        return stored_items.Scope(self.session_id, self.owner_id, self.using)

    async def get_items(
        self,
        limit: int | None = None,
        *,
        wrapper: RunContextWrapper[Any] | None = None,
    ) -> list[TResponseInputItem]:
        """Retrieve the conversation history.

        Args:
            limit: The newest ``limit`` stored items, oldest first (exactly ``limit``
                when that many exist: the SDK's item-count semantics, which its Runner
                and compaction rely on). A stored row that cannot be decoded is
                skipped and does not use up a slot. ``None`` uses
                ``session_settings.limit``, and if that is ``None`` too, all items.
                ``0`` or less returns ``[]``.
            wrapper: The run context the Runner passes; accepted, not used.

        Returns:
            The items; ``[]`` for a conversation that does not exist.
        """
        resolved = resolve_session_limit(limit, self.session_settings)
        traced = {"gen_ai.conversation.id": self.session_id}
        with telemetry.span(telemetry.HISTORY_READ, traced) as span:
            items = await bridge.run(stored_items.read_items, self._scope, resolved)
            span.set_attribute("agent_sessions.items", len(items))
        return items

    async def add_items(
        self,
        items: list[TResponseInputItem],
        *,
        wrapper: RunContextWrapper[Any] | None = None,
    ) -> None:
        """Append ``items`` as one atomic, ordered batch.

        Every item is validated first: one that is not JSON (or not exactly so), nests
        deeper than ``AGENT_SESSIONS["MAX_ITEM_DEPTH"]`` or is larger than
        ``AGENT_SESSIONS["MAX_ITEM_BYTES"]`` raises ``ValueError``/``TypeError`` naming
        it, and nothing of the batch is written. ``[]`` does nothing.

        Inline file data (``input_image`` data URLs, ``input_file`` data) longer than
        ``offload_chars`` (by default ``AGENT_SESSIONS["ATTACHMENTS"]["OFFLOAD_CHARS"]``)
        is stored once per conversation in Django's storage; the row keeps a reference,
        and ``get_items`` returns the item exactly as it was added. ``MAX_ITEM_BYTES``
        applies to the rest.
        """
        items, files = inline.split_batch(items, self._offload_threshold())
        encoded = serialization.encode_items(
            items,
            max_bytes=app_settings.MAX_ITEM_BYTES,
            max_depth=app_settings.MAX_ITEM_DEPTH,
        )
        if not encoded:
            return
        title = _title_from(encoded)
        traced = {"gen_ai.conversation.id": self.session_id, "agent_sessions.items": len(encoded)}
        with telemetry.span(telemetry.HISTORY_SAVE, traced):
            await bridge.run_to_completion(
                stored_items.append_items, self._scope, encoded, title, files
            )

    async def pop_item(
        self, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> TResponseInputItem | None:
        """Remove and return the newest item, or ``None`` when there is none.

        Concurrent pops from any number of instances, threads or processes each claim
        a different item; none is returned twice and none is lost.
        """
        return await bridge.run_to_completion(stored_items.pop_newest, self._scope)

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Remove every item. The conversation (its owner and title) stays."""
        await bridge.run_to_completion(stored_items.clear, self._scope)

    async def fork(self, new_session_id: str, *, up_to_item_id: int | None = None) -> DjangoSession:
        """A new conversation ``new_session_id`` holding this one's items up to the
        stored item ``up_to_item_id`` (every item: None), and its session.

        The copy is exact (``get_items`` of the branch gives the same items as this
        one's, files included) but for tool calls whose output it does not hold (a cut
        after a call, a call waiting for an approval) and the reasoning that led only to
        them, which the model API would refuse.
        The branch has the same owner, is titled after this conversation, and names it
        (``AgentSession.branched_from``, ``branched_at_item_id``); its files are its own
        copies. One transaction. Raises ``ValueError`` if ``new_session_id`` is taken,
        ``LookupError`` if this conversation does not exist, ``SessionOwnershipError``
        as every method does. Item ids are those of the chat's wire and the admin.
        """
        branch = copy.copy(self)
        branch.session_id = _validated_session_id(new_session_id)
        await bridge.run_to_completion(branches.fork, self._scope, branch.session_id, up_to_item_id)
        return branch

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        """The SDK's hook for a manual ``run_compaction()``: replace the whole history.

        ``OpenAIResponsesCompactionSession`` looks this private method up by name (as on
        the SDK's ``RedisSession``). Without it, the SDK clears, then adds the summary,
        and a reader in between sees an empty history. Here it is one transaction that
        locks the conversation row first: the items are validated first (nothing is
        deleted if one is rejected), then the old rows go and the new ones come at once.
        Returns True once replaced; False (the SDK's clear-then-add, through the
        subclass's own methods) for a subclass that overrides ``get_items``,
        ``add_items`` or ``clear_session`` without overriding this method too.
        """
        cls = type(self)
        if cls._atomic_replace_items is DjangoSession._atomic_replace_items and (
            cls.get_items is not DjangoSession.get_items
            or cls.add_items is not DjangoSession.add_items
            or cls.clear_session is not DjangoSession.clear_session
        ):
            return False
        items, files = inline.split_batch(items, self._offload_threshold())
        encoded = serialization.encode_items(
            items, max_bytes=app_settings.MAX_ITEM_BYTES, max_depth=app_settings.MAX_ITEM_DEPTH
        )
        await bridge.run_to_completion(compaction.replace_all, self._scope, encoded, files)
        return True

    async def _get_compaction_snapshot(
        self,
        limit: int,
        *,
        prune_prefix: Callable[[TResponseInputItem], bool] | None = None,
    ) -> _CompactionSnapshot | None:
        """The SDK's compaction hook: a bounded suffix and its atomic replacement.

        ``OpenAIResponsesCompactionSession`` looks this private method up by name (as
        on the SDK's own SQL stores). Without it, the SDK compacts by
        ``clear_session()`` then ``add_items()``, which loses an item another worker
        appends meanwhile. Here the snapshot is the newest ``limit`` readable rows (one
        query); ``replace_suffix`` replaces the rows it names in one transaction, after
        locking the conversation row, and only if they are still the newest: if anyone
        appended, popped or cleared meanwhile it changes nothing and returns False.
        Rows that do not decode are kept: the snapshot starts after them.

        A subclass that overrides ``get_items`` or ``add_items`` (to transform items)
        gets ``None`` (the SDK's generic path) unless it overrides this method too,
        since the snapshot reads and writes stored rows directly.
        """
        cls = type(self)
        if (
            cls.get_items is not DjangoSession.get_items
            or cls.add_items is not DjangoSession.add_items
        ) and cls._get_compaction_snapshot is DjangoSession._get_compaction_snapshot:
            return None
        scope = self._scope
        snapshot = await bridge.run(compaction.snapshot, scope, limit)

        async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
            expected_ids = snapshot.row_ids[start:]
            if not expected_ids:
                return False
            encoded = serialization.encode_items(
                output,
                max_bytes=app_settings.MAX_ITEM_BYTES,
                max_depth=app_settings.MAX_ITEM_DEPTH,
            )
            return await bridge.run_to_completion(
                compaction.replace_suffix, scope, expected_ids, encoded, prune_prefix, limit
            )

        return _CompactionSnapshot(list(snapshot.items), snapshot.complete, replace_suffix)


def _validated_session_id(session_id: Any) -> str:
    if not isinstance(session_id, str):
        raise ValueError(f"session_id must be a str, not {type(session_id).__name__}")
    if not session_id.strip():
        raise ValueError("session_id must not be empty or blank")
    if len(session_id) > SESSION_ID_MAX_LENGTH:
        raise ValueError(
            f"session_id is {len(session_id)} characters; at most {SESSION_ID_MAX_LENGTH} fit"
        )
    if "\x00" in session_id:
        raise ValueError("session_id must not contain NUL characters")
    try:
        session_id.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("session_id must be valid Unicode (it has a lone surrogate)") from None
    return session_id


def _owner_pk(owner: Any) -> Any:
    if owner is None:
        return None
    if getattr(owner, "is_anonymous", False):
        raise ValueError(
            "owner is an anonymous user; pass a saved user, or owner=None for trusted code"
        )
    pk = getattr(owner, "pk", None)
    if pk is None:
        raise ValueError("owner must be a saved user (it has no primary key)")
    return pk


def _title_from(batch: list[serialization.EncodedItem]) -> str:
    """A default conversation title: the start of the first user message.

    Taken from the item's preview (its text with whitespace collapsed), so each item
    is described once per write.
    """
    for encoded in batch:
        if encoded.item_type == "message" and encoded.role == "user" and encoded.preview:
            return encoded.preview[:AUTOMATIC_TITLE_CHARS]
    return ""
