"""Text that every channel can carry: UTF-8 without lone surrogates.

Stored items keep their exact strings; what goes to a browser or through the channel
layer (frames, events, snapshots) is made valid here first.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def is_valid_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: False when it holds a lone surrogate.

    ``json.loads`` accepts ``"\\ud800"`` (half of an emoji, as ``JSON.stringify`` of a cut
    string produces); UTF-8 (websocket text frames) and msgpack (channels_redis) cannot
    carry it.
    """
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def valid_unicode(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (and keys) replaced by U+FFFD.

    For display only (frames, the channel layer): stored items keep the exact value.
    Returns ``value`` itself when there is nothing to replace.
    """
    if isinstance(value, str):
        if is_valid_unicode(value):
            return value
        # In a Python str every surrogate code point is a lone one (json.loads joins pairs).
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_unicode(key): valid_unicode(child) for key, child in value.items()}
    if isinstance(value, list):
        return [valid_unicode(child) for child in value]
    return value
