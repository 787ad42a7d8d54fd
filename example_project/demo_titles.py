"""The offline demo's titles (``AGENT_SESSIONS["TITLES"]`` without an API key): the first
message's words that say something, capitalised, so that a conversation gets a title
after its first exchange as it would from a model, with no network."""

from __future__ import annotations

import re

# Words that say nothing about a conversation's subject.
_FILLER_WORDS = "a an and are can could do does for hello hey hi how i in is it me my of on or "
_FILLER_WORDS += "please the to what what's whats when where which who why will with would you your"
_FILLER = frozenset(_FILLER_WORDS.split(" "))
WORDS = 5


def title(message: str, reply: str) -> str:
    """Up to ``WORDS`` telling words of ``message`` (of ``reply`` if it has none)."""
    for text in (message, reply):
        words = [w for w in re.findall(r"[\w'-]+", text) if w.lower() not in _FILLER]
        if words:
            text = " ".join(words[:WORDS])
            return text[0].upper() + text[1:]
    return ""
