"""The package's import graph, read from the source with ``ast`` (nothing is imported).

Used by ``tests/test_architecture.py`` to hold the layout of ``docs/architecture.md``,
and run as ``python -m tests.import_graph`` to print the graph in Graphviz's DOT
language (``bin/import-graph`` draws ``docs/images/architecture.svg`` from it).

A *room* is a top-level module of the package or one of its subpackages (``streaming``,
``websocket``, ``sse``, ``store``, ``admin``, ``transfer``, ``management``, ``migrations``);
inside ``streaming``, each of its five subpackages is a room of its own (``streaming.running``),
and ``streaming`` is its front door (``__init__``) and its checks.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "django_agent_sessions"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports, at any level of its code."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, node, is_package)
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            # "from pkg import submodule" depends on the submodule, not on pkg's __init__.
            targets.update(submodules if len(submodules) == len(node.names) else {base})
            targets.update(submodules)
    return {_owning_module(target, known) for target in targets if target.startswith(PACKAGE)} - {
        name
    }


def graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports."""
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


# ``streaming/`` is a floor of rooms of its own: each of its subpackages is a room.
STREAMING_ROOMS = ("working", "following", "visiting", "running", "delivery", "wire")


def room_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 3 and parts[1] == "streaming" and parts[2] in STREAMING_ROOMS:
        return f"streaming.{parts[2]}"
    return parts[1] if len(parts) > 1 else "__init__"


def room_graph() -> dict[str, set[str]]:
    """Room -> the rooms it imports."""
    rooms: dict[str, set[str]] = {}
    for module, targets in graph().items():
        room = room_of(module)
        rooms.setdefault(room, set()).update(room_of(t) for t in targets if room_of(t) != room)
    return rooms


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first walk (each reported once, from its start)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                found.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def lines_of_code(room: str) -> int:
    total = 0
    for name, path in modules().items():
        if room_of(name) == room:
            total += sum(1 for line in path.read_text().splitlines() if line.strip())
    return total


def dot() -> Iterator[str]:
    """The room graph in DOT, rooms labelled with their size in non-blank lines."""
    rooms = room_graph()
    yield "digraph rooms {"
    yield '  rankdir=TB; node [shape=box, fontname="Helvetica", fontsize=11];'
    for room in sorted(rooms):
        shared = room.split(".")[0] == "streaming"
        shape = ', style="rounded,filled", fillcolor="#dbe8f5"' if shared else ""
        yield f'  "{room}" [label="{room}\\n{lines_of_code(room)} lines"{shape}];'
    for room in sorted(rooms):
        for target in sorted(rooms[room]):
            yield f'  "{room}" -> "{target}";'
    yield "}"


def _absolute(name: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _owning_module(target: str, known: set[str]) -> str:
    """The longest known module that ``target`` is or lies in (``a.b.C`` -> ``a.b``)."""
    parts = target.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts) or PACKAGE


if __name__ == "__main__":
    sys.stdout.write("\n".join(dot()) + "\n")
