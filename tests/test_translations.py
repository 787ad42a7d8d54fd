"""The app's text is translatable: the shipped catalogue lists every marked string, and a
catalogue for another language translates the chat page and the admin transcript.

``tests/test_marked_strings.py`` checks the other half: that visible text is marked.
Both need GNU gettext (``bin/test`` installs it); without it they fail, never skip.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import translation

from tests.conversations import make_conversation, transcript_items

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "django_agent_sessions"
CATALOGUE = Path("locale", "en", "LC_MESSAGES", "django.po")
MESSAGES_SCRIPT = PACKAGE_DIR.parent / "bin" / "messages"

# A few French strings of each page, real ones, so that the page reads as a translator's would.
FRENCH = {
    # The chat page's template.
    "New conversation": "Nouvelle conversation",
    "Send": "Envoyer",
    "Stop": "Arrêter",
    "Skip to the message box": "Aller au champ du message",
    "No conversations yet.": "Pas encore de conversation.",
    # The strings its script shows (#chat-strings).
    "Connecting…": "Connexion…",
    "Connection lost. Reconnecting…": "Connexion perdue. Reconnexion…",
    # The admin transcript: its template and its labels (admin/transcript.py).
    "Transcript": "Transcription",
    "Reasoning summary": "Résumé du raisonnement",
    "Raw JSON": "JSON brut",
    "Tool call: %(name)s": "Outil appelé : %(name)s",
}


# The shipped catalogue ----------------------------------------------------------------------


def msgids(po_text: str) -> set[tuple[str, str, str]]:
    """The (context, msgid, plural msgid) of every entry of a .po file, header left out."""
    entries: list[dict[str, str]] = []
    entry: dict[str, str] = {}
    key = ""
    for line in po_text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):  # comments, locations, flags, obsolete (#~)
            continue
        if line.startswith('"'):  # a continuation of the previous keyword's string
            entry[key] += ast.literal_eval(line)
            continue
        key, _, value = line.partition(" ")
        if key in ("msgctxt", "msgid") and any(k.startswith("msgstr") for k in entry):
            entries.append(entry)
            entry = {}
        entry[key] = ast.literal_eval(value)
    entries.append(entry)
    return {
        (e.get("msgctxt", ""), e["msgid"], e.get("msgid_plural", "")) for e in entries if e["msgid"]
    }


def test_the_po_reader_reads_contexts_plurals_and_continued_strings():
    text = (
        'msgid ""\nmsgstr ""\n"Language: en\\n"\n\n#: a.py\nmsgid "One"\nmsgstr ""\n\n'
        'msgctxt "verb"\nmsgid "Clear"\nmsgstr ""\n\n#, python-format\nmsgid ""\n'
        '"%(n)d item "\n"removed"\nmsgid_plural "%(n)d items removed"\nmsgstr[0] ""\n'
        'msgstr[1] ""\n\n#~ msgid "Gone"\n#~ msgstr ""\n'
    )
    assert msgids(text) == {
        ("", "One", ""),
        ("verb", "Clear", ""),
        ("", "%(n)d item removed", "%(n)d items removed"),
    }


@pytest.mark.once
def test_the_shipped_catalogue_lists_every_marked_string(tmp_path):
    """bin/messages into a copy of the package gives the strings the shipped file has."""
    copy = tmp_path / "django_agent_sessions"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("locale", "__pycache__"))
    result = subprocess.run(
        ["bash", str(MESSAGES_SCRIPT), str(copy)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    fresh = msgids((copy / CATALOGUE).read_text())
    assert ("", "New conversation", "") in fresh  # the scan found the templates
    assert ("", "Tool call: %(name)s", "") in fresh  # and the Python modules
    languages = sorted((PACKAGE_DIR / "locale").glob("*/LC_MESSAGES/django.po"))
    assert PACKAGE_DIR / CATALOGUE in languages
    for catalogue in languages:  # English, and any translation shipped later
        shipped = msgids(catalogue.read_text())
        assert sorted(fresh - shipped) == [], f"{catalogue} lacks these: run bin/messages"
        assert sorted(shipped - fresh) == [], f"{catalogue} has gone ones: run bin/messages"
        if catalogue != PACKAGE_DIR / CATALOGUE:
            assert catalogue.with_suffix(".mo").exists(), "bin/messages compiles translations"


# A translated page ----------------------------------------------------------------------------


def write_catalogue(locale_dir: Path, language: str, translations: dict[str, str]) -> None:
    """A compiled catalogue for ``language`` under ``locale_dir`` (a LOCALE_PATHS entry)."""
    messages = locale_dir / language / "LC_MESSAGES"
    messages.mkdir(parents=True)
    header = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    entries = [
        f"msgid {json.dumps(source, ensure_ascii=False)}\n"
        f"msgstr {json.dumps(translated, ensure_ascii=False)}\n"
        for source, translated in translations.items()
    ]
    (messages / "django.po").write_text(header + "\n".join(entries), encoding="utf-8")
    subprocess.run(
        ["msgfmt", "--check", "-o", str(messages / "django.mo"), str(messages / "django.po")],
        check=True,
    )


@pytest.fixture
def french(tmp_path):
    """The app in French, from a catalogue in LOCALE_PATHS (which wins over the app's own).

    Changing LOCALE_PATHS and LANGUAGE_CODE empties Django's translation caches, on the way
    in and out (django.test.signals), so no other test sees this catalogue."""
    write_catalogue(tmp_path / "locale", "fr", FRENCH)
    with (
        override_settings(LOCALE_PATHS=[str(tmp_path / "locale")], LANGUAGE_CODE="fr"),
        translation.override("fr"),
    ):
        yield


@pytest.fixture
def staff_client(db) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def text_of(page: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>([^<]*)<', page)
    assert found, element_id
    return found.group(1)


def test_the_chat_page_is_translated(french, staff_client):
    page = staff_client.get(reverse("django_agent_sessions:conversation", args=["c-new"])).text
    assert '<html lang="fr">' in page
    assert text_of(page, "new-conversation") == "Nouvelle conversation"
    assert text_of(page, "send-button") == "Envoyer"
    assert text_of(page, "stop-button") == "Arrêter"
    assert text_of(page, "connection-status") == "Connexion…"
    assert "<title>Nouvelle conversation · " in page
    assert ">Aller au champ du message</a>" in page
    assert '<li class="empty">Pas encore de conversation.</li>' in page
    # What the script shows comes from the page, translated with it.
    assert 'data-connecting="Connexion…"' in page
    assert 'data-reconnecting="Connexion perdue. Reconnexion…"' in page
    for english in ["New conversation", ">Send<", ">Stop<", "Connecting…", "Skip to the"]:
        assert english not in page, english


def test_the_admin_transcript_is_translated(french, staff_client):
    conversation = make_conversation("c-1", transcript_items())
    url = reverse("admin:django_agent_sessions_agentsession_change", args=[conversation.pk])
    page = staff_client.get(url).text
    assert '<h2 id="agent-transcript-title">Transcription</h2>' in page
    assert "<summary>Résumé du raisonnement</summary>" in page
    assert page.count("<summary>JSON brut</summary>") == 7
    assert "Outil appelé : get_weather" in page  # a label made in Python
    for english in [">Transcript<", "Reasoning summary", "Raw JSON", "Tool call: get_weather"]:
        assert english not in page, english


def test_english_is_back_after_the_french_tests(staff_client):
    """The catalogue above did not stay in Django's translation caches."""
    page = staff_client.get(reverse("django_agent_sessions:conversation", args=["c-new"])).text
    assert text_of(page, "send-button") == "Send"
