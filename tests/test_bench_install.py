"""``bin/bench`` installs what the benchmarks run: the extras ``bin/test`` installs.

The benchmarks' servers mount the app's URLconfs, the protocol adapters' included
(``benchmarks/floor_view.py``), and an adapter imports its protocol's library: a bench
environment without the ``ag-ui`` extra answered every request with a 500. The smoke
runs (``test_benchmarks_smoke.py``) use the test environment, which has every extra, so
only this comparison catches a list that falls behind.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = re.compile(r'-e "\.\[([a-z0-9,-]+)\]"')


def extras_of(script: str) -> set[str]:
    found = EXTRAS.findall((ROOT / "bin" / script).read_text())
    assert len(found) == 1, f"bin/{script} installs the package once, with its extras"
    return set(found[0].split(","))


def test_bin_bench_installs_the_extras_bin_test_installs() -> None:
    assert extras_of("bench") == extras_of("test")


def test_the_extras_exist_in_pyproject() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    section = pyproject.split("[project.optional-dependencies]")[1].split("\n[")[0]
    declared = set(re.findall(r"^([a-z0-9-]+) = \[", section, re.M))
    assert extras_of("test") <= declared
