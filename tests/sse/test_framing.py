"""A frame as an event of ``text/event-stream``, and the page's list of event names."""

from __future__ import annotations

import json
import re

from django_agent_sessions.sse import framing
from django_agent_sessions.streaming.wire import protocol
from tests.import_graph import PACKAGE_DIR

STREAM_JS = PACKAGE_DIR / "static" / "django_agent_sessions" / "chat" / "stream.js"


def test_a_numbered_event_has_an_id_and_every_event_one_data_line():
    text = framing.event_text(
        {"type": "text.delta", "run_id": "r1", "seq": 7, "delta": "two\nlines\r\u2028"}
    )
    assert text.endswith("\n\n")
    lines = text[:-2].split("\n")
    assert lines[:2] == ["id: r1:7", "event: text.delta"]
    assert len(lines) == 3
    assert json.loads(lines[2].removeprefix("data: "))["delta"] == "two\nlines\r\u2028"


def test_a_history_frame_sets_or_clears_where_a_reconnection_resumes():
    snapshot = {"run_id": "r2", "seq": 4, "items": [], "text": "so far"}
    with_run = framing.event_text({"type": "history", "items": [], "active_run": snapshot})
    assert with_run.startswith("id: r2:4\nevent: history\n")
    without = framing.event_text({"type": "history", "items": [], "active_run": None})
    assert without.startswith("id: \nevent: history\n")  # an empty id clears the browser's


def test_frames_without_a_sequence_have_no_id():
    assert framing.frame_id({"type": "history", "items": []}) == ""
    assert framing.frame_id({"type": "run.failed", "run_id": "r", "seq": None}) == ""
    assert framing.frame_id({"type": "x", "run_id": "r", "seq": True}) == ""


def test_the_page_listens_for_every_frame_the_server_sends():
    listed = re.search(r"SERVER_FRAME_TYPES = \[(.*?)\];", STREAM_JS.read_text(), re.S)
    assert listed is not None
    assert set(re.findall(r'"([\w.]+)"', listed.group(1))) == set(protocol.SERVER_FRAMES)
