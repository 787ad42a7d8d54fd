"""A pytest plugin (``-p tests.long_first`` in ``pyproject.toml``): files marked
``long(seconds)`` run first, the longest first.

``bin/test`` gives each of its processes one test file at a time, in collection order
(``--dist loadfile``). A file that takes a minute, collected last, runs alone at the end
while the other process has nothing left to do. Started first, it runs beside the short
files; the longest first, so that the last one to start is the shortest (the seconds
are about what the file takes on the 2-core machine, measured with ``--durations``). The
order within each file, and of the files of equal weight, is unchanged.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_weight)  # a stable sort


def _weight(item: pytest.Item) -> float:
    marker = item.get_closest_marker("long")
    return -float(marker.args[0]) if marker is not None else 0.0
