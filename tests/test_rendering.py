"""Safe Markdown: what renders, and what model output can never get onto a page."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from django_agent_sessions.rendering import MAX_MARKDOWN_CHARS, render_markdown, sanitize

SAFE_TAGS = {"p", "a", "code", "pre", "strong", "em", "s", "br"}


class _Elements(HTMLParser):
    """Every (tag, attributes) of a fragment, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.found


def test_common_markdown_renders():
    html = render_markdown(
        "**bold** and *it*\n\n- one\n- two\n\n1. first\n\n```python\nprint('<x>')\n```\n"
    )
    assert "<strong>bold</strong>" in html
    assert "<em>it</em>" in html
    assert "<ul>\n<li>one</li>" in html
    assert "<ol>\n<li>first</li>" in html
    assert "<pre><code class=\"language-python\">print('&lt;x&gt;')\n</code></pre>" in html


def test_tables_and_strikethrough_render_without_inline_style():
    html = render_markdown("| a | b |\n|:-|-:|\n| 1 | ~~2~~ |")
    assert "<table>" in html
    assert "<s>2</s>" in html
    assert "style" not in html  # a strict CSP would refuse it


def test_links_open_safely():
    html = render_markdown("[docs](https://example.com/a?b=1 'T') and <mailto:a@example.com>")
    assert (
        '<a href="https://example.com/a?b=1" title="T" target="_blank" '
        'rel="noopener noreferrer nofollow">docs</a>'
    ) in html
    assert 'href="mailto:a@example.com"' in html


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<a href="https://e.com" onclick="alert(1)">x</a>',
        "<svg onload=alert(1)>",
        "<iframe src=https://e.com></iframe>",
        "<style>body{display:none}</style>",
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "![x](javascript:alert(1))",
        "`<script>`",
        '<div style="position:fixed">x</div>',
    ],
)
def test_model_output_cannot_produce_active_markup(text):
    html = render_markdown(text)
    for tag, attributes in elements(html):
        assert tag in SAFE_TAGS, html
        assert not [name for name in attributes if name.startswith("on") or name == "style"]
        href = (attributes.get("href") or "").strip().lower()
        assert not href or href.startswith(("http:", "https:", "mailto:")), html


def test_images_are_not_loaded():
    html = render_markdown("![pixel](https://tracker.example/p.png)")
    assert "<img" not in html
    assert 'href="https://tracker.example/p.png"' in html  # shown as a link instead


def test_sanitizer_is_a_second_layer_on_its_own():
    dirty = (
        '<p onclick="x()">hi<script>bad()</script><a href="javascript:x()">j</a>'
        '<a href="https://ok.example">ok</a><code class="evil language-js">c</code>'
        '<code class="language-py">d</code></p>'
    )
    clean = sanitize(dirty)
    assert "onclick" not in clean
    assert "script" not in clean
    assert "bad()" not in clean
    assert "javascript:" not in clean
    assert 'rel="noopener noreferrer nofollow"' in clean
    assert 'class="evil' not in clean
    assert '<code class="language-py">d</code>' in clean


def test_empty_and_huge_texts():
    assert render_markdown("") == ""
    huge = "<b>x</b> " * (MAX_MARKDOWN_CHARS // 9 + 1)
    html = render_markdown(huge)
    assert html.startswith("<pre>")
    assert "<b>" not in html
