"""``tests.long_first``: the files marked ``long(seconds)`` are collected first, longest
first; everything else keeps its order."""

from __future__ import annotations

from typing import Any

import pytest

from tests import long_first


class Collected:
    """What the plugin reads of a collected test: its ``long`` marker, if any."""

    def __init__(self, name: str, seconds: float | None = None) -> None:
        self.name = name
        self.marker = None if seconds is None else pytest.mark.long(seconds).mark

    def get_closest_marker(self, name: str) -> Any:
        return self.marker if name == "long" else None


def test_long_files_come_first_longest_first_and_the_rest_keep_their_order() -> None:
    items: list[Any] = [
        Collected("a"),
        Collected("short_long", 20),
        Collected("b"),
        Collected("longest", 80),
        Collected("longest_second_test", 80),
        Collected("c"),
    ]
    long_first.pytest_collection_modifyitems(items)
    assert [item.name for item in items] == [
        "longest",
        "longest_second_test",
        "short_long",
        "a",
        "b",
        "c",
    ]
