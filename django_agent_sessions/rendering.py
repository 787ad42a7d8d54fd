"""Safe Markdown for assistant replies, shared by the chat page and the admin transcript.

Model output is attacker-influenced (prompt injection through tools, pasted documents), so
it goes through two independent layers:

1. markdown-it-py parses CommonMark (plus tables and strikethrough) with raw HTML
   **disabled**: ``<script>`` in a reply becomes the visible text ``&lt;script&gt;``, and its
   link validator refuses ``javascript:``, ``vbscript:``, ``file:`` and ``data:`` URLs.
   Images are not rendered (``![alt](url)`` shows as a link): an image would load a URL
   the model chose, a tracking pixel at the least.
2. nh3 (the Rust ``ammonia`` sanitizer) then keeps only the tags and attributes this
   renderer produces (no ``style``: table alignment is dropped, so a strict
   Content-Security-Policy has nothing to refuse), only ``http``, ``https`` and
   ``mailto`` links, and gives every link ``rel="noopener noreferrer nofollow"`` and
   ``target="_blank"``.

The result is safe to insert as HTML (``innerHTML`` in the chat, ``mark_safe`` in the
admin) and is only ever produced by :func:`render_markdown`.
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

#: Replies longer than this are shown as escaped plain text in a <pre>: the parser is
#: fast, but a multi-megabyte reply should not hold a worker's thread.
MAX_MARKDOWN_CHARS = 200_000

ALLOWED_TAGS = frozenset(
    {
        "p", "br", "hr", "strong", "em", "s", "del", "code", "pre", "blockquote",
        "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "ol": {"start"},
    "code": {"class"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    parser.enable(["table", "strikethrough"])
    parser.disable("image")
    return parser


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    if tag == "code" and attribute == "class":
        # markdown-it's "language-python" on fenced blocks; nothing else.
        return value if value.startswith("language-") and value.isascii() else None
    return value


def sanitize(html: str) -> str:
    """Keep only what :func:`render_markdown` may produce; every link opens safely."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags={"script", "style"},
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        attribute_filter=_keep_attribute,
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )


def render_markdown(text: str) -> str:
    """An assistant message's Markdown as sanitized HTML (an empty string for no text)."""
    if not text:
        return ""
    if not text.isascii():
        # A lone surrogate (which a stored item may hold) cannot cross into the parser
        # or the sanitizer: it is shown as U+FFFD, like everywhere else on the wire.
        text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) > MAX_MARKDOWN_CHARS:
        return sanitize(f"<pre>{nh3.clean_text(text)}</pre>")
    return sanitize(_parser().render(text))
