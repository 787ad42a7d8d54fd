"""The item <-> stored form layer, without a database."""

from __future__ import annotations

import enum
import json
from collections import OrderedDict

import pytest

from django_agent_sessions import serialization
from django_agent_sessions.serialization import encode_item


def encode(item):
    return encode_item(item, index=0, max_bytes=None, max_depth=100)


def test_browsing_columns_for_each_kind():
    message = encode({"role": "user", "content": "Hello\n  there"})
    assert (message.item_type, message.role, message.preview) == ("message", "user", "Hello there")
    parts = encode(
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "A"}, {"type": "refusal", "refusal": "B"}],
        }
    )
    assert parts.preview == "AB"
    call = encode({"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"x":1}'})
    assert (call.item_type, call.call_id, call.preview) == ("function_call", "c", 'f({"x":1})')
    output = encode({"type": "function_call_output", "call_id": "c", "output": {"ok": True}})
    assert output.preview == '{"ok": true}'
    reasoning = encode({"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]})
    assert reasoning.preview == "hm"


def test_columns_are_safe_for_any_database():
    item = encode({"role": "user\x00", "content": "nul\x00 and \ud800 surrogate " + "x" * 500})
    assert "\x00" not in item.preview + item.role
    item.preview.encode("utf-8")
    assert len(item.preview) == serialization.PREVIEW_CHARS
    assert json.loads(item.payload)["content"].startswith("nul\x00 and \ud800")


def test_payload_is_compact_and_keeps_non_ascii():
    assert encode({"b": "é", "a": [1, 2]}).payload == '{"b":"é","a":[1,2]}'


def test_json_compatible_subclasses_take_the_careful_walk_and_are_accepted():
    class Role(str, enum.Enum):
        USER = "user"

    class Count(enum.IntEnum):
        ONE = 1

    item = OrderedDict(role=Role.USER, content=("a", "b"), n=Count.ONE)
    assert encode(item).payload == '{"role":"user","content":["a","b"],"n":1}'


def test_a_problem_below_a_subclass_is_still_named():
    with pytest.raises(ValueError, match=r"item 0\['content'\]\[1\]: nan is not a valid"):
        encode(OrderedDict(content=("a", float("nan"))))


def test_collapse_whitespace_skip_assumption():
    # collapse_whitespace() returns a printable text as it is: that is exact only while
    # every character str.split() splits on, but the ASCII space, is not printable.
    split_on = [c for c in map(chr, range(0x110000)) if len(f"a{c}b".split()) == 2]
    assert " " in split_on
    assert [c for c in split_on if c != " " and c.isprintable()] == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "plain words, one space each",
        " leading",
        "trailing ",
        "double  space",
        "line\nbreak",
        "tab\there",
        "no\xa0break",
        "ideographic\u3000space",
        "line\u2028separator",
        "unit\x1fseparator",
        "next\x85line",
        "°C and ünïcödé",
        "zero\u200bwidth",  # not whitespace to split(), and not printable: the slow path
    ],
)
def test_collapse_whitespace_is_join_split(text):
    assert serialization.collapse_whitespace(text) == " ".join(text.split())
