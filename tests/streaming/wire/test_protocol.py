"""The wire protocol's JSON Schema: generated from ``streaming/protocol.py``, committed,
and what the real consumer sends (driven through every frame type) validates against it."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from jsonschema import Draft202012Validator

from django_agent_sessions import DjangoSession
from django_agent_sessions.store import approvals
from django_agent_sessions.streaming.running import lifecycle
from django_agent_sessions.streaming.wire import encoding, protocol
from django_agent_sessions.websocket import consumer
from tests import approval_agent, chat_agent
from tests.scripted import streamed_reply, tool_turn
from tests.websockets import Socket, of_type

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("closing_sockets")]
SCHEMA = protocol.schema()
ANSWER = "It is sunny in Paris, **21°C**."
TITLES = {"FUNCTION": "tests.title_functions.gated"}


def validator(definition: str) -> Draft202012Validator:
    """Validates against one of the schema's definitions (``server_frame``, ...)."""
    root = {key: value for key, value in SCHEMA.items() if key != "oneOf"}
    return Draft202012Validator(
        {**root, "$ref": f"#/$defs/{definition}"},
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


SERVER = validator("server_frame")
CLIENT = validator("client_frame")


def problems(check: Draft202012Validator, frame: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in check.iter_errors(frame)]


@pytest.fixture(autouse=True)
def agent_settings(use_agent):
    # A short history, so that the history has more and load_older pages.
    # A title after the first exchange (conversation.title), written by a function.
    use_agent("tests.chat_agent.make_payment_agent", HISTORY_LIMIT=4, TITLES=TITLES)


# The schema itself ----------------------------------------------------------------------


def test_the_committed_schema_files_are_generated_from_protocol_py():
    text = protocol.schema_text()
    for path in (protocol.DOCS_FILE, protocol.STATIC_FILE):
        assert path.read_text() == text, f"{path} is stale: python -m {protocol.__name__}"
    assert protocol.main(["--check"]) == 0
    Draft202012Validator.check_schema(SCHEMA)


def test_the_check_notices_a_stale_file(tmp_path, monkeypatch):
    stale = tmp_path / "wire-protocol.schema.json"
    stale.write_text("{}\n")
    monkeypatch.setattr(protocol, "STATIC_FILE", stale)
    assert protocol.main(["--check"]) == 1
    assert protocol.main([]) == 0
    assert json.loads(stale.read_text()) == SCHEMA


def test_the_schema_and_the_server_share_their_numbers_and_codes():
    assert encoding.PROTOCOL_VERSION == protocol.PROTOCOL_VERSION
    assert consumer.CLIENT_ID_MAX_LENGTH == protocol.CLIENT_ID_MAX_LENGTH
    assert approvals.MAX_MESSAGE_CHARS == protocol.APPROVAL_MESSAGE_MAX_LENGTH
    streaming = Path(protocol.__file__).parents[1]
    modules = ("visiting/actions.py", "visiting/admission.py", "visiting/queueing.py")
    modules += ("wire/frames.py",)
    source = "".join((streaming / name).read_text() for name in modules)
    used = set(re.findall(r'(?:BadFrame\(\s*|UploadRefused\(\s*|"code": )"(\w+)"', source))
    used |= {"busy"}  # frames.busy()
    assert used == set(protocol.ERROR_CODES)


def test_the_validator_rejects_malformed_frames():
    good = {"type": "run.started", "run_id": "r", "seq": 1, "agent": "A"}
    assert problems(SERVER, good) == []
    for bad in (
        {"type": "run.started", "run_id": "r", "agent": "A"},  # no seq
        {**good, "seq": 0},
        {**good, "extra": True},
        {"type": "run.finished", "run_id": "r", "seq": 2},
        {"type": "text.delta", "run_id": "r", "seq": 2, "delta": 5},
        {"type": "item.completed", "run_id": "r", "seq": 2, "item": {"kind": "video"}},
        {
            "type": "item.completed",
            "run_id": "r",
            "seq": 2,
            "item": {"kind": "message", "role": "assistant", "text": "no html"},
        },
        {"type": "error", "code": "oops", "message": "?"},
        {"type": "approval.requested", "run_id": "r", "seq": 3, "call_id": "c", "name": "t"},
        {"type": "history", "protocol": 1, "items": [], "has_more": False, "oldest_id": None},
        {"type": "user_message", "text": "a client frame"},
    ):
        assert problems(SERVER, bad), bad
    assert problems(CLIENT, {"type": "user_message", "text": "  "})
    assert problems(CLIENT, {"type": "approval", "call_id": "c", "approve": "yes"})


# The server's real frames ---------------------------------------------------------------


async def drain(socket: Socket) -> None:
    """Read whatever the socket still has (it ends up in ``socket.received``)."""
    while True:
        try:
            await socket.receive(timeout=0.3)
        except (asyncio.TimeoutError, TimeoutError):
            return


async def test_every_frame_the_server_sends_validates(alice_cookie, session_id):
    gate = asyncio.Event()
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-w"),
        streamed_reply(ANSWER),
        streamed_reply("Once upon a time " * 20, gate=gate),  # cancelled
        RuntimeError("the model broke"),
        streamed_reply("", tool_calls=approval_agent.two_payments()),
        streamed_reply("Ann is paid; Bob is not."),
        streamed_reply("", tool_calls=approval_agent.two_payments()),  # cancelled waiting
    )
    sent: list[tuple[dict[str, Any], bool]] = []  # and whether the schema allows it
    tab = Socket(session_id, alice_cookie)
    await tab.open()

    async def send(frame: dict[str, Any], valid: bool = True) -> None:
        sent.append((frame, valid))
        await tab.send(frame)

    # A run with a tool call.
    await send({"type": "user_message", "text": "Weather in Paris?"})
    await tab.until("conversation.title")  # (after run.completed)
    # Refused frames: each gets an error (the last one is well-formed but unknown).
    await tab.communicator.send_to(text_data="{not json")
    await send({"type": "user_message", "text": " ", "client_id": "c-0"}, valid=False)
    await send({"type": "dance"}, valid=False)
    await send({"type": "load_older", "before": "x"}, valid=False)
    await send({"type": "approval", "call_id": "", "approve": True}, valid=False)
    await send({"type": "approval", "call_id": "nobody", "approve": True})
    errors = [(await tab.receive())["code"] for _ in range(6)]
    assert errors == [
        "invalid_json",
        *("empty_text", "unknown_type", "invalid_frame", "invalid_approval", "unknown_approval"),
    ]
    # A run cancelled mid-reply, while another tab joins it and a message is refused.
    await send({"type": "user_message", "text": "Tell me a story"})
    delta = (await tab.until("text.delta"))[-1]
    joined = await Socket(session_id, alice_cookie).open()
    assert joined["active_run"]["items"][0]["text"] == "Tell me a story"
    back = Socket(session_id, alice_cookie, query=f"resume={delta['run_id']}:{delta['seq']}")
    assert (await back.connect())[0]
    assert (await back.receive())["type"] == "resumed"  # a page reconnecting mid-run
    await send({"type": "user_message", "text": "Meanwhile?", "client_id": "c-2"})
    assert (await tab.until("error"))[-1]["code"] == "busy"
    await send({"type": "cancel"})
    await tab.until("run.cancelled")
    gate.set()
    # A failed run.
    # (client_id on a run of one stored item: see test_a_page_labels_only_user_messages)
    await send({"type": "user_message", "text": "Break, please", "client_id": "c-1"})
    await tab.until("run.failed")
    # A run waiting for approvals: another tab sees it pending, then both are decided.
    await send({"type": "user_message", "text": "Pay Ann and Bob"})
    await tab.until("approval.requested")
    await tab.until("approval.requested")
    reloaded = Socket(session_id, alice_cookie)
    history = await reloaded.open()
    assert len(history["pending_approvals"]) == 2
    assert history["has_more"] is True
    await reloaded.send({"type": "load_older", "before": history["oldest_id"]})
    page = await reloaded.until("history.page")
    assert page[-1]["items"]
    await send({"type": "approval", "call_id": "call-ann", "approve": True})
    await send({"type": "approval", "call_id": "call-bob", "approve": False, "message": "no"})
    await tab.until("run.completed")
    # A waiting run cancelled: its pending calls are rejected.
    await send({"type": "user_message", "text": "Pay them again"})
    await tab.until("approval.requested")
    await tab.until("approval.requested")
    await send({"type": "cancel"})
    await tab.until("run.cancelled")
    # The whole conversation, as a new tab pages through it.
    last = Socket(session_id, alice_cookie)
    older = await last.open()
    while older["has_more"]:
        await last.send({"type": "load_older", "before": older["oldest_id"]})
        older = (await last.until("history.page"))[-1]

    for socket in Socket.opened:
        await drain(socket)
    frames = [frame for socket in Socket.opened for frame in socket.received]
    # A run whose worker died is announced by another worker.
    frames.append(lifecycle.lost_worker_event("a-lost-run", 7))
    failures = {json.dumps(f)[:300]: problems(SERVER, f) for f in frames if problems(SERVER, f)}
    assert failures == {}
    for frame, valid in sent:
        assert (problems(CLIENT, frame) == []) == valid, frame

    # steer.accepted: WHILE_RUNNING = "steer" only (tests/websocket/test_consumer_steer.py);
    # conversation.queue: WHILE_RUNNING = "queue" only (test_protocol_queue.py).
    only_in_modes = {"steer.accepted", "conversation.queue"}
    assert {f["type"] for f in frames} == set(protocol.SERVER_FRAMES) - only_in_modes
    items = [f["item"] for f in of_type(frames, "item.completed")]
    for page in of_type(frames, "history") + of_type(frames, "history.page"):
        items += page["items"]
    assert {i["kind"] for i in items} >= {"message", "tool_call", "tool_output"}
    assert {i.get("status") for i in items} >= {"cancelled", "failed"}  # run notes
    assert any(i.get("client_id") == "c-1" and "id" in i for i in items)
    assert {f.get("reason") for f in of_type(frames, "approval.resolved")} == {None, "cancelled"}
    assert any(f.get("resumed") for f in of_type(frames, "run.started"))
    assert any(f.get("client_id") == "c-2" for f in of_type(frames, "error"))


async def test_a_rate_limited_error_validates(alice_cookie, session_id, settings):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "RATE_LIMIT": "1/h"}
    chat_agent.script(streamed_reply("One."))
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    await tab.say("One")
    await tab.until("run.completed")
    await tab.send({"type": "user_message", "text": "Two", "client_id": "c-9"})
    refused = (await tab.until("error"))[-1]
    assert refused["code"] == "rate_limited"
    assert isinstance(refused["retry_after"], int)
    assert problems(SERVER, refused) == []


async def test_a_page_labels_only_user_messages(alice_cookie, session_id, settings):
    settings.AGENT_SESSIONS = {**settings.AGENT_SESSIONS, "HISTORY_LIMIT": 3}
    chat_agent.script(
        tool_turn("get_weather", {"city": "Paris"}, call_id="call-w"), streamed_reply(ANSWER)
    )
    tab = Socket(session_id, alice_cookie)
    await tab.open()
    await tab.send({"type": "user_message", "text": "Weather?", "client_id": "c-1"})
    await tab.until("run.completed")
    history = await Socket(session_id, alice_cookie).open()
    assert history["has_more"] is True
    assert problems(SERVER, history) == []


async def test_a_stored_message_with_a_role_outside_the_protocol_is_shown_as_other(
    alice_cookie, session_id
):
    alice = await User.objects.aget(username="alice")
    await DjangoSession(session_id, owner=alice).add_items(
        [
            {"role": "user", "content": "hi"},
            {"role": "critic", "content": "not a role the protocol knows"},
            {"type": "message", "role": "developer", "content": "a known one"},
        ]
    )
    history = await Socket(session_id, alice_cookie).open()
    assert problems(SERVER, history) == []
    shown = [(item["kind"], item.get("role"), item.get("type")) for item in history["items"]]
    assert shown == [
        ("message", "user", None),
        ("other", None, "message"),
        ("message", "developer", None),
    ]


def test_the_protocol_document_says_what_connecting_does():
    """What the behaviour test (test_consumer's connecting_writes_nothing) checks, and only
    that: a document that also says a connection creates a conversation contradicts it."""
    document = Path(__file__).resolve().parents[3] / "docs" / "wire-protocol.md"
    text = " ".join(document.read_text().split())
    assert "Connecting writes nothing." in text
    assert "Connecting to an id nobody uses yet writes nothing" in text
    assert not re.search(r"[Cc]onnecting[^.:;]*creates", text), "connecting creates nothing"
