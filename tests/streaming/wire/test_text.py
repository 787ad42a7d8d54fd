"""``text``: what a browser or the channel layer gets of a string is valid UTF-8, while
the value stored stays exact."""

from __future__ import annotations

import json

from django_agent_sessions.streaming.wire.text import is_valid_unicode, valid_unicode

HALF_EMOJI = json.loads('"half \\ud83d emoji"')  # what JSON.stringify of a cut string gives


def test_a_lone_surrogate_is_not_valid_and_a_pair_is():
    assert is_valid_unicode("plain ascii")
    assert is_valid_unicode("émoji 😀 and RTL שלום")
    assert not is_valid_unicode(HALF_EMOJI)


def test_lone_surrogates_are_replaced_in_strings_keys_and_nesting():
    value = {HALF_EMOJI: [HALF_EMOJI, {"ok": "😀"}], "n": 1}
    shown = valid_unicode(value)
    assert shown == {"half \ufffd emoji": ["half \ufffd emoji", {"ok": "😀"}], "n": 1}
    json.dumps(shown).encode("utf-8")  # now any channel carries it
    assert value[HALF_EMOJI][0] == HALF_EMOJI  # the original is left as it was


def test_a_valid_value_is_returned_itself():
    text = "nothing to replace 😀"
    assert valid_unicode(text) is text
    assert valid_unicode(None) is None
