"""The Python blocks of docs/attachments.md, docs/feedback.md, the run context's in
docs/wire-protocol.md and the pub/sub layer's in docs/tasks.md, run as written."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from django_agent_sessions.files import storage
from django_agent_sessions.files.checks import check_attachments
from django_agent_sessions.models import Feedback
from tests.feedback_helpers import a_replied_conversation

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _python_blocks(name: str) -> list[str]:
    text = (DOCS / name).read_text()
    return re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)


def test_the_attachments_settings_block_is_the_defaults_and_passes_the_checks(settings):
    namespace: dict[str, Any] = {}
    exec(_python_blocks("attachments.md")[1], namespace)
    assert namespace["AGENT_SESSIONS"]["ATTACHMENTS"] == storage.DEFAULTS
    settings.STORAGES = {**settings.STORAGES, **namespace["STORAGES"]}
    settings.AGENT_SESSIONS = namespace["AGENT_SESSIONS"]
    assert check_attachments() == []


@pytest.mark.django_db
def test_the_feedback_block_records_a_rating():
    rated = a_replied_conversation()
    request = SimpleNamespace(user=rated.owner)
    names = {"request": request, "session_id": "c-rated", "item_id": rated.reply_id}
    exec(_python_blocks("feedback.md")[0], names)
    saved = Feedback.objects.get()
    assert (saved.rating, saved.comment, saved.tag_list) == (-1, "Wrong sum.", ["inaccurate"])


def test_the_run_context_block_makes_the_tools_context_from_the_default(settings):
    """docs/wire-protocol.md's RUN_CONTEXT function, run as written and named by the
    setting: the tools get a TenantContext with the default's fields and the tenant."""
    from django_agent_sessions import AgentRunContext
    from django_agent_sessions.streaming.visiting import context

    block = next(b for b in _python_blocks("wire-protocol.md") if "def run_context" in b)
    module = ModuleType("docs_run_context")
    sys.modules[module.__name__] = module  # a dataclass looks its module up as it is made
    try:
        exec(block, module.__dict__)
        settings.AGENT_SESSIONS = {"RUN_CONTEXT": "docs_run_context.run_context"}
        user = SimpleNamespace(profile=SimpleNamespace(tenant="acme"))
        default = AgentRunContext(user=user, session_id="s-1", session=None, scope={})
        made = context.run_context(default)
    finally:
        del sys.modules[module.__name__]
    assert isinstance(made, module.TenantContext)
    assert (made.user, made.session_id, made.tenant) == (user, "s-1", "acme")


def test_the_pub_sub_layer_block_builds_that_layer_and_passes_the_checks(settings):
    from channels.layers import get_channel_layer
    from django.core.checks import run_checks

    (block,) = [b for b in _python_blocks("tasks.md") if "RedisPubSubChannelLayer" in b]
    namespace: dict[str, Any] = {"REDIS_URL": "redis://127.0.0.1:6379/0"}
    exec(block, namespace)
    settings.CHANNEL_LAYERS = namespace["CHANNEL_LAYERS"]
    settings.AGENT_SESSIONS = {"AGENT": "tests.chat_agent.make_agent"}  # a websocket site
    assert type(get_channel_layer()).__name__ == "RedisPubSubChannelLayer"
    # W012: a host whose read timeout would close idle consumers; W011: no layer.
    ids = {str(message.id) for message in run_checks()}
    assert not ids & {"django_agent_sessions.W011", "django_agent_sessions.W012"}
