"""Every piece of text the app shows is marked for translation, in its templates and in the
chat's JavaScript (which takes its text from the page); the checkers, and cases showing
that they fail. tests/test_translations.py checks that the marked strings are in the
catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import marked_scripts, marked_templates

pytestmark = pytest.mark.once

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "django_agent_sessions"
TEMPLATES = sorted((PACKAGE_DIR / "templates").rglob("*.html"))
SCRIPTS = sorted((PACKAGE_DIR / "static").rglob("*.js"))
CHAT = PACKAGE_DIR / "templates" / "django_agent_sessions" / "chat.html"
CHAT_SCRIPT = PACKAGE_DIR / "static" / "django_agent_sessions" / "chat" / "sidebar.js"


def report(path: Path, found: list) -> list[str]:
    return [f"{path.relative_to(PACKAGE_DIR)}:{item.line}: {item.text}" for item in found]


# The app's own files ---------------------------------------------------------------------


def test_the_app_has_templates_and_scripts_to_check():
    assert len(TEMPLATES) >= 7
    assert {path.name for path in SCRIPTS} >= {"chat.js", "transcript.js"}


def test_every_visible_text_of_the_templates_is_marked():
    found = [
        line
        for path in TEMPLATES
        for line in report(path, marked_templates.unmarked(path.read_text()))
    ]
    assert found == [], "wrap these in {% translate %} or {% blocktranslate %}"


def test_every_visible_text_of_the_scripts_comes_from_the_page():
    found = [
        line for path in SCRIPTS for line in report(path, marked_scripts.unmarked(path.read_text()))
    ]
    assert found == [], "add these to chat_strings.html and use strings.* instead"


# The checkers fail ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("checker", "path", "marked", "unmarked"),
    [
        (marked_templates, CHAT, '{% translate "Send" %}', "Send"),
        (marked_scripts, CHAT_SCRIPT, "this.strings.untitled", '"Untitled"'),
    ],
    ids=["template", "script"],
)
def test_an_unmarked_text_of_the_app_is_reported_with_its_line(checker, path, marked, unmarked):
    source = path.read_text()
    line = source[: source.index(marked)].count("\n") + 1
    broken = source.replace(marked, unmarked)
    assert [(item.line, item.text) for item in checker.unmarked(broken)] == [(line, unmarked)]


@pytest.mark.parametrize(
    ("template", "reported"),
    [
        ("<p>Hello</p>", "Hello"),
        ("<p>{% translate 'Hello' %} and more</p>", "{…} and more"),
        ('<button title="Close">{% translate "x" %}</button>', 'title="Close"'),
        ('<img alt="Logo" src="{{ url }}">', 'alt="Logo"'),
        ('<nav aria-label="Pages"></nav>', 'aria-label="Pages"'),
        ('<textarea placeholder="Type"></textarea>', 'placeholder="Type"'),
        ('<input type="submit" value="Go">', 'value="Go"'),
        ('<div id="chat-strings" data-hello="Hello"></div>', 'data-hello="Hello"'),
        ('{{ title|default:"Untitled" }}', '{{ title|default:"Untitled" }}'),
        ('{% block body_attributes %} title="Hi"{% endblock %}', 'title="Hi"'),
        ("<noscript><p>Needs JavaScript.</p></noscript>", "Needs JavaScript."),
    ],
)
def test_the_template_checker_reports(template, reported):
    assert [item.text for item in marked_templates.unmarked("{% load i18n %}\n" + template)] == [
        reported
    ]


@pytest.mark.parametrize(
    "template",
    [
        "<!DOCTYPE html><p>{% translate 'Hello' %}</p>",
        "{% blocktranslate with n=name %}Hello\n{{ n }}{% endblocktranslate %}",
        "<!-- a note --> {# a comment #} {% comment %}Notes{% endcomment %}",
        '<script>const a = "Hi";</script><style>p { color: red }</style>',
        '<input type="hidden" name="action" value="clear_history">',
        '<p>{{ created|date:"DATETIME_FORMAT" }} &rsaquo; {{ t|default:_("Hi") }}</p>',
        '<li class="entry"{% if a %} hidden{% endif %} data-state="connecting"></li>',
        "{% block bodyclass %}delete-confirmation{% endblock %}",
    ],
)
def test_the_template_checker_lets_pass(template):
    assert marked_templates.unmarked("{% load i18n %}\n" + template) == []


def test_the_template_checker_gives_the_line_of_the_text():
    source = '{% load i18n %}\n<p>{% translate "A" %}</p>\n<div\n  title="Late">\n\n  Later</div>'
    assert [(item.line, item.text) for item in marked_templates.unmarked(source)] == [
        (4, 'title="Late"'),
        (6, "Later"),
    ]


@pytest.mark.parametrize(
    ("script", "reported"),
    [
        ('element("p", "x", "Hello there")', '"Hello there"'),
        ('element("p", "x", ok ? strings.yes : "No way")', '"No way"'),
        ('node.textContent = "Saved";', '"Saved"'),
        ("node.textContent += `Done ${n}`;", "`Done ${n}`"),
        ("button.title = 'Copy this';", "'Copy this'"),
        ('input.placeholder = "Type here";', '"Type here"'),
        ('box.setAttribute("aria-label", "Close");', '"Close"'),
        ('if (!window.confirm("Really delete?")) return;', '"Really delete?"'),
        ('alert("Oops")', '"Oops"'),
        ('showError("Something broke");', '"Something broke"'),
        ('transcript.finishReply(null, "failed", "It failed");', '"It failed"'),
    ],
)
def test_the_script_checker_reports(script, reported):
    assert [item.text for item in marked_scripts.unmarked(script)] == [reported]


@pytest.mark.parametrize(
    "script",
    [
        'element("p", "note", strings.hello)',
        'element("div", "message " + (isUser ? "user" : "assistant"))',
        'node.textContent = "";',
        'node.textContent = strings.stopped + ".";',
        'showError(frame.code === "busy" ? strings.busy : frame.message);',
        'node.textContent = strings["stopped"];',
        'link.setAttribute("aria-current", "page");',
        'node.dataset.status = "failed";',
        '// node.textContent = "Hello";\n/* element("p", "x", "Hello") */',
        'const url = "wss://" + host; node.textContent = strings[state];',
        'document.title = title + " · " + document.title.split(" · ").pop();',
        "function element(tag, className, text) {}",
    ],
)
def test_the_script_checker_lets_pass(script):
    assert marked_scripts.unmarked(script) == []


def test_the_script_checker_gives_the_line_of_the_text():
    script = 'const a = "Not shown";\nelement(\n  "p",\n  "x",\n  "Hello"\n);'
    assert [(item.line, item.text) for item in marked_scripts.unmarked(script)] == [(5, '"Hello"')]
