"""Taking inline files out of items and putting them back (no database, no storage)."""

from __future__ import annotations

import base64
import copy
import json

from django_agent_sessions.files import inline
from tests.attachment_helpers import data_url, image_message, png

IMAGE = png(64, 64)  # 12 KB


def test_split_takes_out_long_files_and_leaves_the_item_alone():
    message = image_message(IMAGE)
    original = copy.deepcopy(message)
    stripped, found = inline.split(message, 1000)
    assert message == original
    assert stripped["content"][1]["image_url"] == ""
    assert stripped["content"][0] == message["content"][0]
    (image,) = found
    assert (image.path, image.prefix) == (("content", 1, "image_url"), "data:image/png;base64,")
    assert (image.data, image.content_type) == (IMAGE, "image/png")


def test_payload_and_restore_give_the_item_back():
    output = {
        "type": "function_call_output",
        "call_id": "c",
        "output": [
            {"type": "input_image", "image_url": data_url(IMAGE)},
            {"type": "input_file", "file_data": base64.b64encode(b"%PDF" * 999).decode()},
        ],
    }
    stripped, found = inline.split(output, 1000)
    stored = inline.payload(json.dumps(stripped), found, ["first", "second"])
    assert [ref["name"] for ref in inline.references(stored)] == ["first", "second"]
    texts = {  # what the storage holds, in base64
        "first": base64.b64encode(IMAGE).decode(),
        "second": base64.b64encode(b"%PDF" * 999).decode(),
    }
    prefixes = {"first": "data:image/png;base64,", "second": ""}
    assert [ref["prefix"] for ref in inline.references(stored)] == list(prefixes.values())

    def load_text(name: str, prefix: str) -> str:
        assert prefix == prefixes[name]
        return prefix + texts[name]

    assert inline.restore(stored, load_text) == output


def test_only_file_parts_are_taken():
    long_text = "QUJD" * 1000  # base64, but a text part's
    item = {"role": "user", "content": [{"type": "input_text", "text": long_text}]}
    assert inline.split(item, 10) == (item, [])
    not_base64 = {
        "role": "user",
        "content": [{"type": "input_image", "image_url": "data:,x" * 999}],
    }
    assert inline.split(not_base64, 10) == (not_base64, [])


def test_split_batch_keys_files_by_position_and_passes_anything_else_through():
    batch = [{"role": "user", "content": "hi"}, image_message(IMAGE)]
    stripped, files = inline.split_batch(batch, 1000)
    assert list(files) == [1]
    assert stripped[0] is batch[0]
    assert inline.split_batch(batch, 10**9) == (batch, {})
    assert inline.split_batch("not a list", 10) == ("not a list", {})
    assert inline.references(json.dumps(batch[0])) == []


def test_shown_names_the_stored_file_without_reading_it():
    stripped, found = inline.split(image_message(IMAGE), 1000)
    stored = inline.payload(json.dumps(stripped), found, ["agent_sessions/c/f"])
    shown = inline.shown(stored)
    assert (
        shown["content"][1]["image_url"] == "data:image/png;base64,[stored file agent_sessions/c/f]"
    )
    assert shown["content"][0] == stripped["content"][0]
