"""The wire protocol of ``docs/wire-protocol.md`` as data: every frame, both directions,
and the display items. The JSON Schema (draft 2020-12) is generated from it by
``python -m django_agent_sessions.streaming.wire.protocol`` (``--check``: exit 1 if stale),
into ``docs/wire-protocol.schema.json`` and the static file of the same name. Objects
are closed: the schema says exactly what the server sends. Plain data, no Django."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django_agent_sessions.streaming.wire.shapes import (
    Schema,
    Shape,
    integer,
    nullable,
    one_of,
    ref,
    string,
    typed,
)

PROTOCOL_VERSION = 2
CLIENT_ID_MAX_LENGTH, CALL_ID_MAX_LENGTH, APPROVAL_MESSAGE_MAX_LENGTH = 64, 255, 2000
ROLES = ["user", "assistant", "system", "developer"]
RUN_FAILED_CODES = ["agent_error", "max_turns", "guardrail", "run_too_large", "worker_lost"]
RUN_FAILED_CODES += ["interrupted", "run_token_limit"]
ERROR_CODES = [
    *("invalid_json", "invalid_frame", "unknown_type", "empty_text", "invalid_text", "too_large"),
    *("busy", "rate_limited", "unavailable", "invalid_approval", "unknown_approval", "not_found"),
    *("too_many_files", "unknown_file", "quota_exceeded", "unknown_queued", "queue_full"),
]
APPROVAL_REASONS = ["expired", "cancelled"]
TOKEN_COUNTS = ["requests", "input_tokens", "output_tokens", "total_tokens"]


# Field types ------------------------------------------------------------------------

RUN_ID = string("The run's id (a UUID), the same in every frame of the run.")
SEQ = integer("The event's number within its run, from 1; a socket gets them in order.", minimum=1)
ITEM_ID = integer("A stored item's id: increasing within a conversation, stable.", minimum=1)
CALL_ID = string("The tool call's id.", minLength=1, maxLength=CALL_ID_MAX_LENGTH)
CLIENT_ID = string(
    "Chosen by the page (printable characters): comes back on the message's item and errors.",
    minLength=1,
    maxLength=CLIENT_ID_MAX_LENGTH,
)
TIMESTAMP = string("ISO 8601, UTC.", format="date-time")
RETRY_AFTER = integer("Seconds to wait (rate_limited, quota_exceeded).", minimum=0)
RESETS_AT = string("When the token budget refills (quota_exceeded).", format="date-time")
JSON_TEXT = string("The JSON text the model wrote.")
MESSAGE = string("Translated, human-readable text: show it as it is.")
TITLE = string("Plain text (show it with textContent), at most 80 characters.", minLength=1)
USAGE = Shape("Token usage.", {name: integer(minimum=0) for name in TOKEN_COUNTS}).schema()
REPLY_ITEM_ID = nullable(integer("The id of the run's last stored assistant message.", minimum=1))
SENT_CLIENT_ID = string("The user_message's client_id, or empty.")
UNSTEERED = Shape(
    "A message sent during the run that no model call took.",
    {"text": string(), "client_id": SENT_CLIENT_ID},
).schema()
ENDED = {
    "user_item_id": integer("The stored id of the person's message it answered.", minimum=1),
    # WHILE_RUNNING = "steer": its sender sends them again (docs/wire-protocol.md).
    "unsteered": typed("array", "Sent during the run, never taken.", items=UNSTEERED),
}
FINAL_OUTPUT = {"description": "A string, or JSON for agents with a structured output_type."}
FAILURE = Shape("Why.", {"code": {"enum": RUN_FAILED_CODES}, "message": MESSAGE}).schema()
FILE = {"id": integer(minimum=1), "name": string(), "content_type": string(), "size": integer()}
FILES = typed("array", "The person's files (c/<id>/files/<id>/).", items=Shape("", FILE).schema())
FILE_IDS = typed("array", items=integer(minimum=1))
TEMPORARY = typed("boolean", "A first message: the conversation it starts is a temporary chat.")
QUEUED_ID = integer("A queued message's id.", minimum=1)
QUEUED = {"id": QUEUED_ID, "text": string(), "client_id": string(), "created_at": TIMESTAMP}
QUEUE = typed("array", "Sent in this order.", items=Shape("A queued message.", QUEUED).schema())
REFUSED = Shape(
    "A queued message that could not be sent: removed from the queue, its text is here.",
    {"text": string(), "client_id": string(), "code": {"enum": ERROR_CODES}, "message": MESSAGE},
).schema()
APPROVAL_MESSAGE = string(
    "What the model reads as the tool's output when the call is rejected.",
    maxLength=APPROVAL_MESSAGE_MAX_LENGTH,
)

# Display items --------------------------------------------------------------------------
# Messages of every role but "user" carry html: the Markdown, rendered and sanitized.
_HTML_UNLESS_USER = {
    "if": {"properties": {"role": {"const": "user"}}},
    "then": {"properties": {"html": False}},
    "else": {"required": ["html"]},
}
ITEM_KINDS: dict[str, Shape] = {
    "message": Shape(
        "A message. Insert text with textContent; html is safe for innerHTML.",
        {"role": {"enum": ROLES}, "text": string()},
        {
            "html": string("Sanitized HTML."),
            "client_id": CLIENT_ID,
            "files": FILES,
            "steered": {"const": True, "description": "Sent during the run it entered."},
        },
        _HTML_UNLESS_USER,
    ),
    "tool_call": Shape(
        "A tool call.", {"call_id": string(), "name": string(), "arguments": JSON_TEXT}
    ),
    "tool_output": Shape("A tool's output.", {"call_id": string(), "output": string()}),
    "reasoning": Shape("The model's reasoning summary (often empty).", {"text": string()}),
    "handoff": Shape(
        "A handoff (live runs only).",
        {"source": string("Agent name."), "target": string("Agent name.")},
    ),
    "other": Shape("An item a chat page may ignore.", {"type": string("The item's type.")}),
}
# A stored item (history, history.page) also says what it is in the conversation.
STORED_FIELDS = {
    "id": ITEM_ID,
    "created_at": TIMESTAMP,
    "run_id": nullable(string("The run that stored it, or null.")),
}
RUN_NOTE = Shape(
    "What a stopped or failed run had streamed of its unfinished reply (not stored).",
    {
        "kind": {"const": "message"},
        "role": {"const": "assistant"},
        "text": string("The streamed text, possibly empty."),
        "html": string("Sanitized HTML of the Markdown text."),
        "status": {"enum": ["cancelled", "failed"]},
        "id": {"type": "null"},
        "created_at": {"type": "null"},
        "run_id": RUN_ID,
    },
    {"error": Shape("Failed runs only.", {"code": {"enum": RUN_FAILED_CODES}}).schema()},
)


def _item(kind: str, shape: Shape, stored: bool) -> Schema:
    required = shape.required | (STORED_FIELDS if stored else {})
    return Shape(shape.description, required, shape.optional, shape.rules).schema(kind=kind)


# Frames ---------------------------------------------------------------------------------

CLIENT_FRAMES: dict[str, Shape] = {
    "user_message": Shape(
        "Starts a run with this text (and files) as the user's message.",
        {"text": string("Not only whitespace, unless files are given.")},
        {"client_id": CLIENT_ID, "files": FILE_IDS, "temporary": TEMPORARY},
        {"anyOf": [{"properties": {"text": {"pattern": r"\S"}}}, {"required": ["files"]}]},
    ),
    "cancel": Shape("Stops the active run (only this run, if given).", {}, {"run_id": string()}),
    "approval": Shape(
        "Decides a tool call that waits for approval.",
        {"call_id": CALL_ID, "approve": typed("boolean")},
        {"message": APPROVAL_MESSAGE},
    ),
    "load_older": Shape("Asks for the items older than before.", {"before": ITEM_ID}),
    "queue_edit": Shape(
        "Replaces the text of one of the person's queued messages.",
        {"id": QUEUED_ID, "text": string("Not only whitespace.", pattern=r"\S")},
    ),
    "queue_remove": Shape("Removes one of the person's queued messages.", {"id": QUEUED_ID}),
}

RUN, LIVE_ITEM = {"run_id": RUN_ID, "seq": SEQ}, ref("live_item")
COMPLETED = {**RUN, "final_output": FINAL_OUTPUT, "usage": USAGE, "reply_item_id": REPLY_ITEM_ID}
RUN_FAILED = {**RUN, "error": FAILURE}
PENDING_CALL = {
    "call_id": CALL_ID,
    "name": string("The tool's name."),
    "description": string("What the tool does, as the agent describes it; may be empty."),
    "arguments": JSON_TEXT,
    "expires_at": TIMESTAMP,
}
PAGE = {
    "items": typed("array", "Oldest first.", items=ref("stored_item")),
    "has_more": typed("boolean", "Older items exist: ask with load_older."),
    "oldest_id": nullable(integer("The oldest item's id: load_older's before.")),
}
SERVER_FRAMES: dict[str, Shape] = {
    "history": Shape(
        "Right after connecting: replaces everything the page shows.",
        {
            "protocol": {"const": PROTOCOL_VERSION},
            **PAGE,
            "last_item_id": nullable(integer("The newest stored item's id.")),
            "active_run": {"anyOf": [ref("active_run"), {"type": "null"}]},
            "pending_approvals": typed("array", items=ref("pending_approval")),
            "queued": QUEUE,
        },
    ),
    "history.page": Shape("The answer to load_older.", {"before": integer(), **PAGE}),
    "resumed": Shape("On reconnecting mid-run: the run's events after seq follow.", RUN),
    "run.started": Shape(
        "A run began, or resumed after its approvals.",
        {**RUN, "agent": string("The agent's name.")},
        {"resumed": {"const": True}},
    ),
    "text.delta": Shape("More assistant text, in order.", {**RUN, "delta": string()}),
    "item.completed": Shape("A completed item (the user's first).", {**RUN, "item": LIVE_ITEM}),
    "run.completed": Shape("The run finished and its history is saved.", COMPLETED, ENDED),
    "run.cancelled": Shape("The run was stopped.", RUN, ENDED),
    "run.failed": Shape("The run failed; the socket stays usable.", RUN_FAILED, ENDED),
    "approval.requested": Shape(
        "The run stopped on a tool call that needs a decision; one frame per call.",
        {**RUN, **PENDING_CALL},
    ),
    "approval.resolved": Shape(
        "A call was decided (by any tab), or rejected because its run ended.",
        {**RUN, "call_id": CALL_ID, "approve": typed("boolean")},
        {"reason": {"enum": APPROVAL_REASONS, "description": "When nobody decided."}},
    ),
    "conversation.title": Shape("A title was written after the first exchange.", {"title": TITLE}),
    "steer.accepted": Shape(
        "To the sender alone (WHILE_RUNNING = steer): its message enters the run.",
        {"run_id": RUN_ID, "client_id": SENT_CLIENT_ID},
        {"accepted": {"const": "user_message", "description": "In the HTTP POST's answer."}},
    ),
    "conversation.queue": Shape(
        "The conversation's queued messages changed (WHILE_RUNNING = 'queue').",
        {"queued": QUEUE},
        {"refused": REFUSED},
    ),
    "error": Shape(
        "A frame was refused; nothing was stored and the socket stays open.",
        {"code": {"enum": ERROR_CODES}, "message": MESSAGE},
        {"client_id": CLIENT_ID, "retry_after": RETRY_AFTER, "resets_at": RESETS_AT},
    ),
}

OTHER_DEFS: dict[str, Schema] = {
    "active_run": {
        "description": "The run in progress; only its run_id if its worker did not answer.",
        "oneOf": [
            Shape(
                "Where the run stands.",
                {
                    "run_id": RUN_ID,
                    "seq": integer("The last event these reflect.", minimum=0),
                    "items": typed("array", "What the run completed.", items=LIVE_ITEM),
                    "text": string("What was streamed of the message being written."),
                },
            ).schema(),
            Shape("The run did not answer in time.", {"run_id": RUN_ID}).schema(),
        ],
    },
    "pending_approval": Shape("A call that waits.", {"run_id": RUN_ID, **PENDING_CALL}).schema(),
    "run_note": RUN_NOTE.schema(),
}


def schema() -> Schema:
    """The JSON Schema of every frame, both directions."""
    defs: dict[str, Schema] = {}
    for frames in (CLIENT_FRAMES, SERVER_FRAMES):
        defs |= {name: shape.schema(type=name) for name, shape in frames.items()}
    for kind, shape in ITEM_KINDS.items():
        defs[f"live_item.{kind}"] = _item(kind, shape, stored=False)
        defs[f"stored_item.{kind}"] = _item(kind, shape, stored=True)
    defs |= OTHER_DEFS
    defs["live_item"] = one_of("Not stored yet.", *(f"live_item.{k}" for k in ITEM_KINDS))
    stored = [f"stored_item.{k}" for k in ITEM_KINDS]
    defs["stored_item"] = one_of("A stored item, or a run note.", *stored, "run_note")
    defs["client_frame"] = one_of("A frame the browser sends.", *CLIENT_FRAMES)
    defs["server_frame"] = one_of("A frame the server sends.", *SERVER_FRAMES)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:django-agent-sessions:wire-protocol:{PROTOCOL_VERSION}",
        "title": f"django-agent-sessions websocket frames, protocol {PROTOCOL_VERSION}",
        "description": "See docs/wire-protocol.md. A frame is a client_frame or a server_frame.",
        "oneOf": [ref("client_frame"), ref("server_frame")],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


_PACKAGE = Path(__file__).resolve().parents[2]
STATIC_FILE = _PACKAGE / "static" / "django_agent_sessions" / "wire-protocol.schema.json"
DOCS_FILE = _PACKAGE.parent / "docs" / "wire-protocol.schema.json"


def main(argv: list[str]) -> int:
    """Write the schema files (in a checkout), or with ``--check`` say which are stale."""
    text = schema_text()
    # In a checkout, the docs' copy too; an installed package has only the static one.
    paths = [STATIC_FILE, *([DOCS_FILE] if (_PACKAGE.parent / "pyproject.toml").is_file() else [])]
    if "--check" in argv:
        stale = [path for path in paths if not path.exists() or path.read_text() != text]
        print("".join(f"{path} is stale: run without --check\n" for path in stale), end="")
        return int(bool(stale))
    for path in paths:
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
