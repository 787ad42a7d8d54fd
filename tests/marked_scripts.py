"""Visible text written into the chat's JavaScript instead of taken from the page.

The chat's script shows only text it gets from ``#chat-strings`` (``strings.*``,
``this.strings.*``, translated in chat_strings.html), from the server, or from the user.
This finds string literals with a letter in them where they would be shown:

- the argument of a function that puts it on the page (``TEXT_ARGUMENTS``: the chat's own
  ``element(tag, className, TEXT)``, ``showError(TEXT)``... and ``confirm``/``alert``/``prompt``);
- the value of ``setAttribute(NAME, TEXT)`` for an attribute a person reads or hears;
- the value assigned to ``.textContent``, ``.title``, ``.placeholder`` and the like.

It is regular expressions over the source, not a JavaScript parser, so it has limits: a
literal stored in a variable first is not followed; a literal compared (``=== "busy"``) or
used as a key (``strings["x"]``) is not text; a regular-expression literal holding a quote,
``//`` or ``/*`` would be read as a string or a comment (the chat's code has none).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

#: Functions that show one of their arguments: its position.
TEXT_ARGUMENTS = {
    "element": 2, "showError": 0, "announce": 0, "note": 0, "showEmptyHint": 0,
    "finishReply": 2, "confirm": 0, "alert": 0, "prompt": 0,
}  # fmt: skip
VISIBLE_ATTRIBUTES = {
    "title", "alt", "placeholder", "label", "aria-label", "aria-description",
    "aria-placeholder", "aria-roledescription", "aria-valuetext",
}  # fmt: skip
VISIBLE_PROPERTIES = [
    "textContent", "innerText", "innerHTML", "title", "placeholder", "alt", "label",
    "ariaLabel", "ariaDescription",
]  # fmt: skip

# Comments and string literals, in the order they start: a "//" inside a string is no comment.
_TOKENS = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`""", re.S
)
_CALL = re.compile(rf"\b({'|'.join(TEXT_ARGUMENTS)}|setAttribute)\s*\(")
_ASSIGNMENT = re.compile(rf"\.({'|'.join(VISIBLE_PROPERTIES)})\s*\+?=(?!=)")
_LETTER = re.compile(r"[^\W\d_]")
_NOT_TEXT_BEFORE = re.compile(r"(===?|!==?|\[)\s*$")
_NOT_TEXT_AFTER = re.compile(r"^\s*(===?|!==?|\])")
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Unmarked:
    line: int
    text: str


def unmarked(source: str) -> list[Unmarked]:
    """The literals of a script's source that would be shown as they are."""
    masked, literals = _mask(source)
    spans: list[tuple[int, int]] = []
    for call in _CALL.finditer(masked):
        arguments = _arguments(masked, call.end())
        name = call.group(1)
        if name == "setAttribute":
            if len(arguments) > 1 and _literal_text(source, arguments[0]) in VISIBLE_ATTRIBUTES:
                spans.append(arguments[1])
        elif TEXT_ARGUMENTS[name] < len(arguments):
            spans.append(arguments[TEXT_ARGUMENTS[name]])
    spans += [
        (found.end(), _expression_end(masked, found.end()))
        for found in _ASSIGNMENT.finditer(masked)
    ]
    found = {
        (start, end)
        for start, end in literals
        for low, high in spans
        if low <= start < high and _is_text(source, start, end)
    }
    return [
        Unmarked(source.count("\n", 0, start) + 1, source[start:end])
        for start, end in sorted(found)
    ]


def _mask(source: str) -> tuple[str, list[tuple[int, int]]]:
    """The source with comments blanked and the inside of string literals filled (so their
    commas and brackets do not count), line breaks kept; and where the literals are."""
    masked = list(source)
    literals = []
    for token in _TOKENS.finditer(source):
        start, end = token.span()
        comment = token.group().startswith("/")
        if not comment:
            literals.append((start, end))
        for index in range(start if comment else start + 1, end if comment else end - 1):
            if source[index] != "\n":
                masked[index] = " " if comment else "_"
    return "".join(masked), literals


def _top_level(masked: str, start: int) -> Iterator[tuple[int, str]]:
    """The characters at bracket depth 0 from ``start``, then ``(end, "")``: ``end`` is the
    bracket that closes around ``start``, or the end of the source."""
    depth = 0
    for index in range(start, len(masked)):
        char = masked[index]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth < 0:
                yield index, ""
                return
        elif depth == 0:
            yield index, char
    yield len(masked), ""


def _arguments(masked: str, start: int) -> list[tuple[int, int]]:
    """The spans of a call's arguments; ``start`` is just after its opening parenthesis."""
    arguments, begin = [], start
    for index, char in _top_level(masked, start):
        if char == ",":
            arguments.append((begin, index))
            begin = index + 1
        elif char == "":
            if masked[begin:index].strip():
                arguments.append((begin, index))
            return arguments
    return arguments


def _expression_end(masked: str, start: int) -> int:
    """Where an assigned expression ends: its ``;``, or the bracket that closes around it."""
    return next(index for index, char in _top_level(masked, start) if char in (";", ""))


def _literal_text(source: str, span: tuple[int, int]) -> str:
    text = source[span[0] : span[1]].strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'`" else ""


def _is_text(source: str, start: int, end: int) -> bool:
    content = re.sub(r"\$\{[^}]*\}", "", source[start + 1 : end - 1])  # a template's ${...}
    return (
        bool(_LETTER.search(content))
        and not _NOT_TEXT_BEFORE.search(source[max(0, start - 20) : start])
        and not _NOT_TEXT_AFTER.search(source[end : end + 20])
    )
