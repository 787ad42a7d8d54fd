"""The layout of ``docs/architecture.md`` holds: arrows point one way, the websocket
wing is entered only through its public paths, and SQL text lives in one module."""

from __future__ import annotations

import ast
import re

from tests import import_graph
from tests.import_graph import PACKAGE, PACKAGE_DIR

WING = f"{PACKAGE}.websocket"
# What the consumer may use besides its own wing: the app's public API.
PUBLIC_API = {PACKAGE, f"{PACKAGE}.conf", f"{PACKAGE}.exceptions"}
# Who may import the wing: the app config (its checks) and the public re-exports.
WING_DOORS = {f"{PACKAGE}.apps", f"{PACKAGE}.consumers", f"{PACKAGE}.routing"}
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT INTO|UPDATE\s+\S+\s+SET|DELETE FROM)\b", re.S)
SQL_HOME = PACKAGE_DIR / "store" / "statements.py"
# A module longer than this must say at its top why it is.
MAX_LINES = 300


def test_modules_and_rooms_import_without_cycles():
    assert import_graph.cycles(import_graph.graph()) == []
    assert import_graph.cycles(import_graph.room_graph()) == []


def test_the_consumer_imports_only_its_wing_and_the_public_api():
    imported = import_graph.graph()[f"{WING}.consumer"]
    outside = {m for m in imported if not m.startswith(WING)} - PUBLIC_API
    assert outside == set()


def test_the_wing_is_entered_only_through_its_public_paths():
    entering = {
        module
        for module, targets in import_graph.graph().items()
        if not module.startswith(WING) and any(t.startswith(WING) for t in targets)
    }
    assert entering <= WING_DOORS


def test_sql_text_lives_in_store_statements_only():
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        if path == SQL_HOME or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and SQL.search(text) and not _is_prose(text):
                offenders.append(f"{path.relative_to(PACKAGE_DIR)}: {node.value[:60]!r}")
    assert offenders == []


def test_long_modules_say_why():
    for path in PACKAGE_DIR.rglob("*.py"):
        lines = path.read_text().splitlines()
        if len(lines) > MAX_LINES and "migrations" not in path.parts:
            head = "\n".join(lines[:15]).lower()
            assert "longer than" in head, f"{path.name}: {len(lines)} lines and no reason given"


def test_the_checker_would_catch_a_cycle_and_sql_elsewhere():
    assert import_graph.cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    assert SQL.search("DELETE FROM items WHERE id = %s")
    assert SQL.search("SELECT owner_id FROM sessions")
    assert not SQL.search("Select the conversations to delete from the list.")


def _is_prose(text: str) -> bool:
    # A docstring that mentions a statement (``DELETE ... RETURNING``) is not SQL to run.
    return "``" in text
