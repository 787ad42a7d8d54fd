"""The layout of ``docs/architecture.md`` holds: arrows point one way, the transports are
thin and share one transport-neutral package (``streaming/``) that imports neither of
them, ``store`` owns the database, SQL text lives in its modules, no module is over 300
lines, and the document lists what exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests import import_graph
from tests.import_graph import PACKAGE, PACKAGE_DIR

SHARED = f"{PACKAGE}.streaming"
TRANSPORT_PACKAGES = [f"{PACKAGE}.websocket", f"{PACKAGE}.sse", f"{PACKAGE}.protocols"]
# The protocols' adapters are HTTP transports: visitor and detached work from the HTTP
# transport's package, as its views do; ChatKit's, a Store too, hops into store.chatkit.
PROTOCOLS, SSE, CHATKIT_STORE = f"{PACKAGE}.protocols", f"{PACKAGE}.sse", f"{PACKAGE}.store.chatkit"
# What a transport may use besides its own package and the shared one: the app's public
# API, the HTTP streams' channel layers, and one hop for the HTTP visitor's lookup.
PUBLIC_API = {PACKAGE, f"{PACKAGE}.conf", f"{PACKAGE}.exceptions"}
TRANSPORT_EXTRAS = {f"{PACKAGE}.layers", f"{PACKAGE}.store.hops"}
# Who may import the shared package: the transports, the public API (``AgentRunContext``),
# the app config (its checks), the public re-export of the consumer, the draining ASGI
# wrapper, the sweep command, and what starts runs from code: the scheduler and the
# agent_sessions_run command (``start_run_sync``).
SHARED_DOORS = {
    PACKAGE,
    f"{PACKAGE}.apps",
    f"{PACKAGE}.draining",
    f"{PACKAGE}.consumers",
    f"{PACKAGE}.management.commands.agent_sessions_sweep",
    f"{PACKAGE}.scheduler.firing",
    f"{PACKAGE}.management.commands.agent_sessions_run",
}
# The app config registers the shared package's system checks from their own module.
SHARED_CHECKS = f"{SHARED}.checks"
# The websocket transport is its consumer and routes; everything else is shared.
WEBSOCKET_MODULES = {"__init__", "consumer", "routing"}
# The transports (the chat page's views and the protocols' adapters too): they decode,
# authorise, call and encode.
TRANSPORTS = [PACKAGE_DIR / name for name in ("websocket", "sse", "chat", "protocols")]
# What only store/ (and the models' own managers) may do with the ORM.
WRITES = {"update", "create", "bulk_create", "delete", "select_for_update", "get_or_create"}
REPO_DIR = PACKAGE_DIR.parent
ARCHITECTURE_DOC = REPO_DIR / "docs" / "architecture.md"
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT INTO|UPDATE\s+\S+\s+SET|DELETE FROM)\b", re.S)
# The search index's SQL and the claims' have modules of their own.
_SQL_MODULES = ("statements.py", "search_statements.py", "claim_statements.py")
SQL_HOMES = {PACKAGE_DIR / "store" / name for name in _SQL_MODULES}
STORE_DIR = PACKAGE_DIR / "store"
# A module longer than this must say at its top why it is.
MAX_LINES = 300


def test_modules_and_rooms_import_without_cycles():
    assert import_graph.cycles(import_graph.graph()) == []
    assert import_graph.cycles(import_graph.room_graph()) == []


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_transports_import_only_the_shared_package_and_the_public_api():
    graph = import_graph.graph()
    for transport in TRANSPORT_PACKAGES:
        imported = {t for m, targets in graph.items() if _in(m, transport) for t in targets}
        outside = {t for t in imported if not _in(t, transport) and not _in(t, SHARED)} - PUBLIC_API
        extras = TRANSPORT_EXTRAS | ({SSE, CHATKIT_STORE} if transport == PROTOCOLS else set())
        assert {t for t in outside if not any(_in(t, extra) for extra in extras)} == set(), (
            transport
        )


def test_the_shared_package_imports_neither_transport():
    graph = import_graph.graph()
    crossing = {
        (module, target)
        for module, targets in graph.items()
        if _in(module, SHARED)
        for target in targets
        if any(_in(target, transport) for transport in TRANSPORT_PACKAGES)
    }
    assert crossing == set()


def test_the_shared_package_is_entered_only_through_its_front_door():
    """Outside ``streaming/``, only the transports and the doors import it, and only its
    ``__init__`` (what ``__all__`` names), never a room's module."""
    graph = import_graph.graph()
    entering = {m for m, targets in graph.items() if not _in(m, SHARED) and _enters(targets)}
    transports = {m for m in entering if any(_in(m, t) for t in TRANSPORT_PACKAGES)}
    assert entering - transports <= SHARED_DOORS
    deeper = {
        (module, target)
        for module in entering
        for target in graph[module]
        if _in(target, SHARED) and target not in {SHARED, SHARED_CHECKS}
    }
    assert deeper == set()


def test_the_front_door_hands_out_what_it_declares():
    import django_agent_sessions.streaming as door

    assert sorted(door.__all__) == sorted(door._DOOR)
    for name in door.__all__:
        assert getattr(door, name) is not None, name


def test_the_rooms_of_the_shared_package_import_only_rooms_below_them():
    """``following`` > ``visiting`` > ``running`` > ``delivery`` > ``wire``: a room imports
    its own modules and the rooms below it, never one above, nor the front door."""
    order = import_graph.STREAMING_ROOMS
    upward = []
    for module, targets in import_graph.graph().items():
        room = _streaming_room(module)
        if room is None:
            continue
        for target in targets:
            if target == SHARED:
                upward.append((module, target))
            target_room = _streaming_room(target)
            if target_room is not None and order.index(target_room) < order.index(room):
                upward.append((module, target))
    assert upward == []


def test_every_module_of_the_shared_package_is_in_a_room():
    loose = {path.stem for path in (PACKAGE_DIR / "streaming").glob("*.py")}
    assert loose == {"__init__", "checks"}
    rooms = {path.parent.name for path in (PACKAGE_DIR / "streaming").glob("*/__init__.py")}
    assert rooms == set(import_graph.STREAMING_ROOMS)


def _streaming_room(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "streaming" and parts[2] in import_graph.STREAMING_ROOMS:
        return parts[2]
    return None


def _enters(targets: set[str]) -> bool:
    return any(_in(t, SHARED) for t in targets)


def test_the_websocket_transport_is_its_consumer_and_routes():
    modules = {path.stem for path in (PACKAGE_DIR / "websocket").glob("*.py")}
    assert modules <= WEBSOCKET_MODULES


def test_every_database_transaction_lives_in_store():
    """No module outside ``store/`` opens a Django transaction (``store/__init__.py``)."""
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        if STORE_DIR in path.parents or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            imports = isinstance(node, ast.ImportFrom) and node.module == "django.db"
            if imports and any(alias.name == "transaction" for alias in node.names):
                offenders.append(str(path.relative_to(PACKAGE_DIR)))
    assert offenders == []


def test_sql_text_lives_in_store_statements_only():
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        if path in SQL_HOMES or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and SQL.search(text) and not _is_prose(text):
                offenders.append(f"{path.relative_to(PACKAGE_DIR)}: {node.value[:60]!r}")
    assert offenders == []


def _too_long(modules: list[Path]) -> dict[str, int]:
    return {
        str(path.relative_to(REPO_DIR)): length
        for path in modules
        if (length := len(path.read_text().splitlines())) > MAX_LINES
        and "migrations" not in path.parts
    }


def test_no_module_is_longer_than_300_lines():
    """Python modules and the chat page's ES modules alike."""
    assert _too_long([*PACKAGE_DIR.rglob("*.py"), *PACKAGE_DIR.rglob("*.js")]) == {}


def test_no_module_beside_the_package_is_longer_than_300_lines():
    """The same rule for the benchmarks, the example project and the tests; not for the
    Agents SDK's own session tests, which ``tests/sdk/`` keeps as the SDK wrote them."""
    sdk_tests = REPO_DIR / "tests" / "sdk"
    modules = [
        *(REPO_DIR / "benchmarks").glob("*.py"),
        *(REPO_DIR / "example_project").rglob("*.py"),
        *(REPO_DIR / "example_project").rglob("*.js"),
        *(path for path in (REPO_DIR / "tests").rglob("*.py") if sdk_tests not in path.parents),
    ]
    assert _too_long(modules) == {}


def test_transports_leave_the_database_to_store():
    """No ``django.db`` import, no ``.objects`` and no write in a transport's module."""
    offenders = []
    for directory in TRANSPORTS:
        for path in directory.rglob("*.py"):
            offenders += [f"{path.relative_to(PACKAGE_DIR)}: {found}" for found in _orm_use(path)]
    assert offenders == []


def test_the_architecture_doc_lists_every_module_of_the_shared_package():
    """Each module of ``streaming/`` in the table, in the room it lives in."""
    text = ARCHITECTURE_DOC.read_text()
    table = text[text.index("**`streaming/`**") :].split("\n\n#")[0]
    listed, room = set(), ""
    for row in re.findall(r"^\|\s*([^|]*?)\s*\|\s*((?:`\w+\.py`(?:, )?)+)\s*\|", table, re.M):
        room = row[0].strip("`/ ") or room
        room = "" if room == "(the door)" else room
        listed |= {f"{room}/{name}".lstrip("/") for name in re.findall(r"`(\w+)\.py`", row[1])}
    streaming = PACKAGE_DIR / "streaming"
    modules = {
        str(path.relative_to(streaming).with_suffix(""))
        for path in streaming.rglob("*.py")
        if path.stem != "__init__"
    }
    assert modules - listed == set(), "modules of streaming/ missing from docs/architecture.md"
    assert listed - modules == set(), "docs/architecture.md lists modules streaming/ lacks"


def test_every_module_of_the_package_has_its_test_module():
    """``x/y.py`` is tested by ``tests/x/test_y.py`` (or ``test_y_<aspect>.py``), a top-level
    ``y.py`` by ``tests/test_y.py``, down to a room of ``streaming/``:
    ``streaming/running/lost.py`` by ``tests/streaming/running/test_lost.py``. Migrations
    and ``__init__.py`` files are left out."""
    untested = [
        str(path.relative_to(PACKAGE_DIR))
        for path in sorted(PACKAGE_DIR.rglob("*.py"))
        if path.stem != "__init__" and "migrations" not in path.parts
        if not _test_modules_of(path)
    ]
    assert untested == []


def _test_modules_of(path: Path) -> list[Path]:
    tests_dir = REPO_DIR / "tests" / path.parent.relative_to(PACKAGE_DIR)
    return [
        *tests_dir.glob(f"test_{path.stem}.py"),
        *tests_dir.glob(f"test_{path.stem}_*.py"),
    ]


def test_the_architecture_picture_is_current():
    """``docs/images/architecture.dot`` has the rooms and arrows the code has (its line
    counts may lag); ``bin/import-graph`` redraws it."""
    drawn = Path(ARCHITECTURE_DOC.parent / "images" / "architecture.dot").read_text()
    assert _arrows(drawn) == _arrows("\n".join(import_graph.dot())), "run bin/import-graph"


def _arrows(dot: str) -> set[str]:
    return {line.strip() for line in dot.splitlines() if "->" in line}


def _orm_use(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("django.db"):
            found.append(f"imports {node.module}")
        elif isinstance(node, ast.Attribute) and node.attr == "objects":
            found.append("uses .objects")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITES
            and not isinstance(node.func.value, ast.Name)  # a dict's .update(), a set's
        ):
            found.append(f"calls .{node.func.attr}()")
    return found


def test_the_checker_would_catch_a_cycle_and_sql_elsewhere(tmp_path):
    assert import_graph.cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
    writer = tmp_path / "writer.py"
    writer.write_text(
        "from django.db import transaction\n"
        "AgentRun.objects.filter(pk=1).update(status='x')\n"
        "kept = {}\nkept.update(a=1)\n"
    )
    assert sorted(_orm_use(writer)) == ["calls .update()", "imports django.db", "uses .objects"]
    assert SQL.search("DELETE FROM items WHERE id = %s")
    assert SQL.search("SELECT owner_id FROM sessions")
    assert not SQL.search("Select the conversations to delete from the list.")


def _is_prose(text: str) -> bool:
    # A docstring that mentions a statement (``DELETE ... RETURNING``) is not SQL to run.
    return "``" in text
