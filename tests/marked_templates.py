"""Visible text in a Django template that is not marked for translation.

The template is split by Django's own ``Lexer``. Its HTML is then rebuilt with every
``{% translate %}``, ``{% blocktranslate %}`` and ``{{ variable }}`` replaced by ``MARK``
(what they render is translated, or data) and every other tag, comment and
``{% comment %}`` removed, keeping the line breaks. Python's ``HTMLParser`` reads that:

- text between tags with a letter in it is unmarked text (``<!DOCTYPE>``, HTML comments,
  ``<script>`` and ``<style>`` are not text; class names and ids are inside tags);
- so are letters in an attribute a person reads or hears (``VISIBLE_ATTRIBUTES``, the
  ``value`` of a button-like ``<input>``, and every ``data-*`` of ``#chat-strings``, whose
  values the chat's script shows);
- and a literal with letters in a ``{{ variable }}``, unless it is inside ``_()`` or a
  date or number format (``|date:"DATETIME_FORMAT"``).

Literals in other tags (``{% firstof a "Text" %}``, ``{% with %}``) are not looked at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from django.template.base import Lexer, TokenType

#: Stands for a translated string or a variable's value: not a letter, not in any template.
MARK = "\ue000"
VISIBLE_ATTRIBUTES = {
    "title", "alt", "placeholder", "label", "aria-label", "aria-description",
    "aria-placeholder", "aria-roledescription", "aria-valuetext",
}  # fmt: skip
BUTTON_TYPES = {"submit", "button", "reset"}
#: The element whose data-* attributes the chat's script shows (chat_strings.html).
STRINGS_ID = "chat-strings"
#: Blocks a parent template renders inside a tag: their text is attributes of <body>
#: (base.html) ...
TAG_BLOCKS = {"body_attributes"}
TAG_BLOCKS_ELEMENT = "block-attributes"  # the made-up tag their attributes are read in
#: ... or the value of an attribute, class names (admin/base.html's <body class="...">).
ATTRIBUTE_VALUE_BLOCKS = {"bodyclass"}
#: Filters whose argument is a format, not text.
FORMAT_FILTERS = {"date", "time", "stringformat", "floatformat"}
TRANSLATE_TAGS = {"translate", "trans"}
BLOCK_TRANSLATE_TAGS = {"blocktranslate", "blocktrans"}

_LETTER = re.compile(r"[^\W\d_]")
_LITERAL = re.compile(r"""(["'])(?:(?!\1).)*\1""")
_MARKED_OR_FORMAT = re.compile(rf"(_\(|\|\s*({'|'.join(FORMAT_FILTERS)})\s*:)\s*$")


@dataclass(frozen=True)
class Unmarked:
    line: int
    text: str


def has_words(text: str) -> bool:
    return bool(_LETTER.search(text))


def unmarked(source: str) -> list[Unmarked]:
    """The unmarked visible text of a template's source, in the order it appears."""
    html, attribute_blocks, found = _rebuild(source)
    found += _read_html(html)
    for line, attributes in attribute_blocks:
        found += _read_html(f"<{TAG_BLOCKS_ELEMENT} {attributes}>", line - 1)
    return sorted(found, key=lambda item: item.line)


def _rebuild(source: str) -> tuple[str, list[tuple[int, str]], list[Unmarked]]:
    """The template's HTML (see the module's docstring), the text of its ``TAG_BLOCKS``
    with their first lines, and the unmarked literals of its variables."""
    html: list[str] = []
    attribute_blocks: list[tuple[int, str]] = []
    found: list[Unmarked] = []
    out = html  # where text goes: the page, or the buffer of a TAG_BLOCKS block
    skip_until = ""  # the end tag of what is being skipped (blocktranslate, comment...)
    blocks: list[str] = []  # the names of the open {% block %} tags
    buffer: list[str] = []
    for token in Lexer(source).tokenize():
        name = token.contents.split(" ", 1)[0] if token.token_type == TokenType.BLOCK else ""
        line = token.lineno or 0  # always set by Lexer.tokenize()
        if skip_until:
            if name == skip_until:
                skip_until = ""
                if name == "endblock":
                    blocks.pop()
            out.append("\n" * token.contents.count("\n"))
            continue
        if token.token_type == TokenType.TEXT:
            out.append(token.contents)
        elif token.token_type == TokenType.VAR:
            found += _unmarked_literals(token.contents, line)
            out.append(MARK)
        elif name in TRANSLATE_TAGS:
            out.append(MARK)
        elif name in BLOCK_TRANSLATE_TAGS:
            out.append(MARK)
            skip_until = "end" + name
        elif name == "comment":
            skip_until = "endcomment"
        elif name == "block":
            blocks.append(token.contents.split()[1])
            if blocks[-1] in ATTRIBUTE_VALUE_BLOCKS:
                skip_until = "endblock"
            elif blocks[-1] in TAG_BLOCKS:
                buffer = []
                attribute_blocks.append((line, ""))
                out = buffer
        elif name == "endblock" and blocks and blocks.pop() in TAG_BLOCKS:
            attribute_blocks[-1] = (attribute_blocks[-1][0], "".join(buffer))
            html.append("\n" * attribute_blocks[-1][1].count("\n"))
            out = html
    return "".join(html), attribute_blocks, found


def _unmarked_literals(variable: str, line: int) -> list[Unmarked]:
    return [
        Unmarked(line, "{{ " + variable + " }}")
        for literal in _LITERAL.finditer(variable)
        if has_words(literal.group()[1:-1])
        and not _MARKED_OR_FORMAT.search(variable[: literal.start()])
    ]


def _read_html(html: str, line_offset: int = 0) -> list[Unmarked]:
    reader = _Reader(line_offset)
    reader.feed(html)
    reader.close()
    return reader.found


class _Reader(HTMLParser):
    def __init__(self, line_offset: int) -> None:
        super().__init__(convert_charrefs=True)
        self.line_offset = line_offset
        self.found: list[Unmarked] = []
        self.raw_text = ""  # inside <script> or <style>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        tag_text = self.get_starttag_text() or ""
        for name, value in values.items():
            if _is_visible(tag, name, values) and has_words(value):
                at = tag_text.find(f"{name}=")
                line = self.getpos()[0] + tag_text[: max(at, 0)].count("\n")
                self.found.append(Unmarked(self.line_offset + line, _shown(f'{name}="{value}"')))
        if tag in ("script", "style"):
            self.raw_text = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self.raw_text:
            self.raw_text = ""

    def handle_data(self, data: str) -> None:
        letter = _LETTER.search(data)
        if letter and not self.raw_text:
            line = self.getpos()[0] + data[: letter.start()].count("\n")
            self.found.append(Unmarked(self.line_offset + line, _shown(data.strip())))


def _is_visible(tag: str, name: str, attributes: dict[str, str]) -> bool:
    if name in VISIBLE_ATTRIBUTES:
        return True
    if name == "value":
        return tag == "input" and attributes.get("type", "text") in BUTTON_TYPES
    return name.startswith("data-") and attributes.get("id") == STRINGS_ID


def _shown(text: str) -> str:
    return text.replace(MARK, "{…}")
