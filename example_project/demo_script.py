"""What the offline demo model says: a pure function of the conversation so far.

Kept apart from the streaming mechanics in ``demo_model.py`` so that the replies are easy
to read and to change. Everything here is deterministic: the same conversation always
gets the same reply (tool outputs, such as the clock's, are the only moving part).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from example_project.demo_files import describe_files

CLOCK_TOOL = "current_time"
CALCULATOR_TOOL = "calculate"
EMAIL_TOOL = "send_company_email"
RESEARCH_TOOL = "research"
# The SDK's output for a tool call the user rejected.
REJECTED = "Tool execution was not approved."

_ASKS_FOR_TIME = re.compile(r"\b(time|clock|date|today)\b", re.IGNORECASE)
# A run of digits, operators and parentheses holding at least one binary operator.
_ARITHMETIC = re.compile(r"[-+(]*\d[\d.\s]*(?:[-+*/%^\u00d7\u00f7]+\s*[-+(]*\s*\d[\d.\s)]*)+")
_ASKS_FOR_STORY = re.compile(r"\b(long|story)\b", re.IGNORECASE)
_ASKS_FOR_RESEARCH = re.compile(r"\bresearch\s+(.+)$", re.IGNORECASE)
_ASKS_FOR_EMAIL = re.compile(r"\b(e-?mail|announce)\b", re.IGNORECASE)
_ABOUT = re.compile(r"\babout\s+(.+)$", re.IGNORECASE)
_ASKS_FOR_ERROR = re.compile(r"\bsimulate an error\b", re.IGNORECASE)
_ASKS_FOR_MARKDOWN = re.compile(r"\bmarkdown\b", re.IGNORECASE)

# The demo's answer to "show me some Markdown": what the chat renders, and how.
MARKDOWN_SAMPLE = (
    "Replies are **Markdown**, rendered safely on the server:\n\n"
    "- *emphasis*, **bold** and `inline code`\n"
    "- links that open in a new tab: [Django](https://www.djangoproject.com/)\n"
    "- fenced code blocks, with a copy button:\n\n"
    "```python\n"
    "from django_agent_sessions import DjangoSession\n\n"
    'session = DjangoSession("support-42", owner=request.user)\n'
    "```\n\n"
    "| tool | what it does |\n|---|---|\n"
    "| current_time | reads the clock |\n| calculate | does arithmetic |\n"
)

STORY_SENTENCES = 40


@dataclass(frozen=True)
class ToolRequest:
    name: str
    arguments: dict[str, Any]
    reasoning: str


@dataclass(frozen=True)
class DemoTurn:
    """One model response: either a tool request or a text reply."""

    text: str = ""
    tool: ToolRequest | None = None


class DemoModelError(RuntimeError):
    """Raised when the user asks the demo model to fail, to show how errors look."""


def plan_turn(items: Sequence[Mapping[str, Any]], tool_names: set[str]) -> DemoTurn:
    """Decide the next response from the input items the Runner sends."""
    last_user = _last_user_index(items)
    if last_user is None:
        return DemoTurn(text="Hello! Send me a message and I will answer.")
    outputs = _tool_results_after(items, last_user)
    if outputs:
        return DemoTurn(text=_tool_summary(outputs))
    text = _text_of(items[last_user])
    if last_user and items[last_user - 1].get("type") == "function_call_output":
        # A message that joined the run after a tool's output (WHILE_RUNNING = "steer").
        earlier = _tool_results_after(items, _last_user_index(items[:last_user]) or 0)
        return DemoTurn(text=f"{_tool_summary(earlier)} You added: \u201c{text}\u201d.")
    received = describe_files(items[last_user])
    if received:  # what the files are, then the usual answer to the text
        return DemoTurn(text=f"{received} {_plain_reply(text, _count_user_messages(items))}")
    if _ASKS_FOR_ERROR.search(text):
        raise DemoModelError("The demo model failed on purpose, because you asked it to.")
    tool = _tool_for(text, tool_names)
    if tool is not None:
        return DemoTurn(tool=tool)
    if _ASKS_FOR_STORY.search(text):
        return DemoTurn(text=long_story())
    if _ASKS_FOR_MARKDOWN.search(text):
        return DemoTurn(text=MARKDOWN_SAMPLE)
    return DemoTurn(text=_plain_reply(text, _count_user_messages(items)))


def long_story() -> str:
    sentences = [
        f"Part {n} of the long story: the demo agent keeps writing, one word at a time, "
        "so that you can watch it stream and press Stop whenever you like."
        for n in range(1, STORY_SENTENCES + 1)
    ]
    return "Once upon a time there was a very patient agent. " + " ".join(sentences)


def _tool_for(text: str, tool_names: set[str]) -> ToolRequest | None:
    if _ASKS_FOR_EMAIL.search(text) and EMAIL_TOOL in tool_names:
        about = _ABOUT.search(" ".join(text.split()))
        subject = (about.group(1) if about else text).strip(" .!?")[:80] or "News"
        return ToolRequest(
            EMAIL_TOOL,
            {"subject": subject[:1].upper() + subject[1:]},
            "The user wants an email to everyone; that tool needs their approval first.",
        )
    topic = _ASKS_FOR_RESEARCH.search(" ".join(text.split()))
    if topic and RESEARCH_TOOL in tool_names:
        subject = topic.group(1).strip(" .!?")[:80]
        return ToolRequest(
            RESEARCH_TOOL, {"topic": subject}, f"I will research {subject}; it takes a moment."
        )
    match = _ARITHMETIC.search(text)
    if match and CALCULATOR_TOOL in tool_names:
        expression = " ".join(match.group(0).split())
        return ToolRequest(
            CALCULATOR_TOOL,
            {"expression": expression},
            f"The user wants {expression} worked out; the calculator tool can do that exactly.",
        )
    if _ASKS_FOR_TIME.search(text) and CLOCK_TOOL in tool_names:
        return ToolRequest(
            CLOCK_TOOL, {}, "The user asks about the time; I will read the clock tool."
        )
    return None


def _plain_reply(text: str, user_messages: int) -> str:
    quoted = " ".join(text.split())
    if len(quoted) > 120:
        quoted = quoted[:119] + "…"
    plural = "message" if user_messages == 1 else "messages"
    return (
        f"You said: “{quoted}”. I am the offline demo agent: I answer without an API key "
        f"or a network connection. You have sent me {user_messages} {plural} in this "
        "conversation, and I remember them because every turn is stored in the database. "
        "Ask me what time it is, or to calculate (12 + 30) * 2, to see a tool call; ask for "
        "a long story to try the Stop button, or for Markdown to see formatting."
    )


def _tool_summary(outputs: list[tuple[str, dict[str, Any], str]]) -> str:
    sentences = []
    for name, arguments, output in outputs:
        if name == CALCULATOR_TOOL:
            expression = arguments.get("expression", "")
            if output.startswith("error:"):
                sentences.append(f"I could not calculate {expression}: {output[6:].strip()}.")
            else:
                sentences.append(f"The calculator says {expression} = {output}.")
        elif name == EMAIL_TOOL and output == REJECTED:
            sentences.append("You rejected the email, so nothing was sent.")
        elif name == EMAIL_TOOL:
            sentences.append(f"Done: {output}.")
        elif name == RESEARCH_TOOL:
            sentences.append(f"My research says: {output}.")
        elif name == CLOCK_TOOL:
            sentences.append(f"The clock tool says it is {output} right now.")
        else:
            sentences.append(f"The {name} tool answered: {output}.")
    return " ".join(sentences)


def _last_user_index(items: Sequence[Mapping[str, Any]]) -> int | None:
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item.get("role") == "user" and item.get("type", "message") == "message":
            return index
    return None


def _tool_results_after(
    items: Sequence[Mapping[str, Any]], start: int
) -> list[tuple[str, dict[str, Any], str]]:
    """(tool name, arguments, output) for each call answered since the user last spoke."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    results = []
    for item in items[start + 1 :]:
        if item.get("type") == "function_call":
            calls[str(item.get("call_id"))] = (str(item.get("name")), _arguments(item))
        elif item.get("type") == "function_call_output":
            name, arguments = calls.get(str(item.get("call_id")), ("tool", {}))
            results.append((name, arguments, _output_text(item.get("output"))))
    return results


def _count_user_messages(items: Sequence[Mapping[str, Any]]) -> int:
    return sum(
        1
        for item in items
        if item.get("role") == "user" and item.get("type", "message") == "message"
    )


def _text_of(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def _arguments(item: Mapping[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(str(item.get("arguments") or "{}"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return " ".join(str(part.get("text", "")) for part in output if isinstance(part, Mapping))
    return json.dumps(output, ensure_ascii=False)
