"""The public surface: every name the docs tell a project to import comes from where they
say, and those places are the package's face (its ``__init__`` and Django's conventional
modules), so internal modules may move without breaking a project."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import django_agent_sessions
from tests.import_graph import PACKAGE

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# The package's face: its __init__ (``__all__``) and the modules Django projects name by
# convention (settings, URLconfs, ASGI routing, signal receivers, the models' imports).
PUBLIC_MODULES = {
    PACKAGE,
    *(
        f"{PACKAGE}.{name}"
        for name in ("models", "signals", "exceptions", "urls", "routing", "consumers", "asgi")
    ),
}
IMPORT = re.compile(r"from (django_agent_sessions[\w.]*) import ([\w, ]+)")
DOTTED = re.compile(r"\bdjango_agent_sessions(?:\.\w+)+")
# Names in the docs that are not Python: system check ids and the app's permission.
NOT_PYTHON = re.compile(r"^django_agent_sessions\.([EW]\d{3}|exempt_from_quotas)$")


def _imports_in_docs() -> list[tuple[str, str, str]]:
    found = []
    for doc in DOCS:
        for module, names in IMPORT.findall(doc.read_text()):
            found += [(doc.name, module, n.strip()) for n in names.split(",") if n.strip()]
    return found


def test_the_docs_import_only_from_the_public_surface():
    imports = _imports_in_docs()
    assert len(imports) >= 10  # the guide, the integration and feedback pages, ...
    outside = [(doc, module) for doc, module, _ in imports if module not in PUBLIC_MODULES]
    assert outside == []


def test_every_name_the_docs_import_is_there():
    missing = [
        (doc, module, name)
        for doc, module, name in _imports_in_docs()
        if not hasattr(importlib.import_module(module), name)
    ]
    assert missing == []


def test_every_dotted_name_in_the_docs_resolves():
    """``django_agent_sessions.signals.feedback_given`` and the like name something real:
    a module, or an attribute of the longest module prefix."""
    unresolved = []
    for doc in DOCS:
        for dotted in set(DOTTED.findall(doc.read_text())):
            if not NOT_PYTHON.match(dotted) and not _resolves(dotted):
                unresolved.append((doc.name, dotted))
    assert unresolved == []


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_the_public_names_resolve_and_are_declared():
    assert sorted(django_agent_sessions.__all__) == sorted(django_agent_sessions._PUBLIC)
    for name in django_agent_sessions.__all__:
        assert getattr(django_agent_sessions, name) is not None, name
    assert {"DjangoSession", "AgentRunContext", "Draining"} <= set(django_agent_sessions.__all__)


def test_an_unknown_name_says_so():
    with pytest.raises(AttributeError, match="NoSuchThing"):
        django_agent_sessions.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018


def test_the_checker_would_catch_an_internal_import():
    assert IMPORT.findall("from django_agent_sessions.store import feedback") == [
        (f"{PACKAGE}.store", "feedback")
    ]
    assert f"{PACKAGE}.store" not in PUBLIC_MODULES
    assert not _resolves(f"{PACKAGE}.store.nowhere")
    assert _resolves(f"{PACKAGE}.signals.feedback_given")
