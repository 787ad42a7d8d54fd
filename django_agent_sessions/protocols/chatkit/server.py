"""``AgentChatKitServer``: a ``ChatKitServer`` that answers with an Agents SDK agent
through ChatKit's own agents helpers, on ``DjangoChatKitStore``.

``respond`` reads the thread's items from the store, turns them into the agent's input
with ChatKit's ``ThreadItemConverter`` (``simple_to_agent_input``'s), runs the agent
with the SDK's ``Runner.run_streamed`` and streams ChatKit's events with
``stream_agent_response``; ChatKit's server then stores every finished item through
the store, so the run's messages are the conversation's. A message past the person's
rate limit or token budget gets ChatKit's error event instead (the packaged chat's
refusal, in its words). Feedback becomes the app's
``Feedback`` (``store.chatkit.feedback``). The agent is ``AGENT_SESSIONS["AGENT"]``,
as for the packaged chat, unless one is given.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner
from chatkit.agents import AgentContext, ThreadItemConverter, stream_agent_response
from chatkit.server import ChatKitServer
from chatkit.store import NotFoundError
from chatkit.types import (
    ErrorEvent,
    FeedbackKind,
    ThreadMetadata,
    ThreadStreamEvent,
    UserMessageItem,
)

from django_agent_sessions.protocols.chatkit.attachments import DjangoChatKitAttachmentStore
from django_agent_sessions.protocols.chatkit.context import ChatKitContext
from django_agent_sessions.protocols.chatkit.store import DjangoChatKitStore
from django_agent_sessions.store.chatkit import Missing
from django_agent_sessions.store.chatkit import feedback as ratings
from django_agent_sessions.streaming import admission, frames, load_agent

# The newest items a reply sees, as ChatKit's own examples read them.
HISTORY_ITEMS = 100


class DjangoAgentContext(AgentContext[ChatKitContext]):
    """ChatKit's ``AgentContext``, with what the app's tools read of their context
    (``AgentRunContext``'s names): the same tools serve the packaged chat and ChatKit."""

    @property
    def user(self) -> Any:
        return self.request_context.user

    @property
    def session_id(self) -> str:
        return self.thread.id

    @property
    def scope(self) -> dict[str, Any]:
        return dict(getattr(self.request_context.request, "scope", None) or {"type": "http"})


class AgentChatKitServer(ChatKitServer[ChatKitContext]):
    """ChatKit's server for one agent (or ``AGENT_SESSIONS["AGENT"]``'s, per request)."""

    converter = ThreadItemConverter()

    def __init__(self, agent: Agent[Any] | None = None) -> None:
        super().__init__(DjangoChatKitStore(), DjangoChatKitAttachmentStore())
        self.agent = agent

    async def get_agent(self, context: ChatKitContext) -> Agent[Any]:
        if self.agent is not None:
            return self.agent
        scope = getattr(context.request, "scope", None) or {"type": "http"}
        return await load_agent(scope)

    async def respond(
        self, thread: ThreadMetadata, input_user_message: UserMessageItem | None, context: Any
    ) -> AsyncIterator[ThreadStreamEvent]:
        page = await self.store.load_thread_items(thread.id, None, HISTORY_ITEMS, "desc", context)
        agent_input = await self.converter.to_agent_input(list(reversed(page.data)))
        agent_context = DjangoAgentContext(thread=thread, store=self.store, request_context=context)
        agent = await self.get_agent(context)
        try:  # the packaged chat's rate limit and token budget, for this person too
            await admission.admit(f"user:{context.user.pk}", context.user, agent)
        except frames.BadFrame as refused:
            yield ErrorEvent(message=refused.message, allow_retry=True)
            return
        result = Runner.run_streamed(agent, agent_input, context=agent_context)
        async for event in stream_agent_response(agent_context, result):
            yield event

    async def add_feedback(
        self, thread_id: str, item_ids: list[str], feedback: FeedbackKind, context: Any
    ) -> None:
        try:
            await ratings.give(context.user, thread_id, item_ids, feedback)
        except Missing:
            raise NotFoundError(f"Thread {thread_id} not found") from None
