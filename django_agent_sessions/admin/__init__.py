"""The admin: browse, read, export, clear and delete conversations. Read-only by design.

Nobody adds or edits conversations or items here: history is what the agent saw, so the
admin only reads it, exports it, clears it or deletes it. None of those loads more than
one page of items: lists use the denormalised ``item_count``; the transcript fetches one
page of payloads; clearing and deleting run one ``DELETE`` for the items instead of
Django's deletion collector, which would load every item first. Tool approvals are listed
read-only: pending ones, and who decided the others and when; so are people's ratings of
replies (feedback). The usage page sums what runs spent per day, user or model, with a
chart and a CSV export. Scheduled runs, configuration rather than records, are edited here.
Share links are listed, and revoked with an action.
"""

from __future__ import annotations

from django_agent_sessions.admin.approvals import ToolApprovalAdmin
from django_agent_sessions.admin.conversations import AgentSessionAdmin
from django_agent_sessions.admin.feedback import FeedbackAdmin
from django_agent_sessions.admin.listing import EstimatedCountPaginator, OwnerFilter
from django_agent_sessions.admin.runs import AgentRunAdmin
from django_agent_sessions.admin.schedules import ScheduledRunAdmin
from django_agent_sessions.admin.sharing import SharedLinkAdmin
from django_agent_sessions.admin.usage import UsageAdmin

__all__ = [
    "AgentRunAdmin",
    "AgentSessionAdmin",
    "EstimatedCountPaginator",
    "FeedbackAdmin",
    "OwnerFilter",
    "ScheduledRunAdmin",
    "SharedLinkAdmin",
    "ToolApprovalAdmin",
    "UsageAdmin",
]
