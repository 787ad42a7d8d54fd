"""The demo agent's tools: a clock, a calculator, a slow research and a company-wide email.

All are ordinary SDK function tools, so the example shows real tool calls and outputs
whichever model drives the agent (the offline demo model or a real one). The email tool
needs approval (``needs_approval=True``): the run pauses until the user approves or
rejects it in the chat. It only pretends: nothing is ever sent. The research takes a
few seconds, time to send a message that joins the reply (``WHILE_RUNNING = "steer"``).
"""

from __future__ import annotations

import ast
import asyncio
import operator
from collections.abc import Callable
from datetime import datetime, timezone

from agents import FunctionTool, function_tool

MAX_EXPRESSION_LENGTH = 200
# Larger powers would let one short expression tie up the worker computing huge integers.
MAX_EXPONENT = 100
MAX_MAGNITUDE = 10**30
# How long the research takes: long enough to add something to the reply meanwhile.
RESEARCH_SECONDS = 4.0

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


class CalculationError(ValueError):
    """The expression is not plain arithmetic, or its result is out of range."""


def current_utc_time() -> str:
    """The current date and time in UTC, ISO 8601 to the second."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def evaluate(expression: str) -> int | float:
    """Evaluate plain arithmetic (numbers, + - * / // % **, parentheses) without eval()."""
    expression = expression.strip().replace("^", "**").replace("\u00d7", "*").replace("\u00f7", "/")
    if not expression:
        raise CalculationError("the expression is empty")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CalculationError(f"the expression is longer than {MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        raise CalculationError(f"{expression!r} is not an arithmetic expression") from None
    result = _evaluate_node(tree.body)
    if isinstance(result, float) and result.is_integer() and abs(result) < MAX_MAGNITUDE:
        return int(result)
    return result


def _evaluate_node(node: ast.expr) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        if isinstance(node.value, bool):
            raise CalculationError("only numbers, + - * / // % ** and parentheses are allowed")
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate_node(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate_node(node.left), _evaluate_node(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalculationError(f"exponents above {MAX_EXPONENT} are not supported")
        try:
            result = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalculationError("division by zero") from None
        except OverflowError:
            raise CalculationError("the result is too large") from None
        if isinstance(result, complex) or abs(result) > MAX_MAGNITUDE:
            raise CalculationError("the result is out of range")
        return result
    raise CalculationError("only numbers, + - * / // % ** and parentheses are allowed")


@function_tool
def current_time() -> str:
    """Tell the current date and time (UTC)."""
    return current_utc_time()


@function_tool
def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression such as "(12 + 30) * 2".

    Args:
        expression: Numbers, + - * / // % ** and parentheses.
    """
    try:
        return str(evaluate(expression))
    except CalculationError as error:
        return f"error: {error}"


@function_tool
async def research(topic: str) -> str:
    """Research a topic (slowly: it takes a few seconds).

    Args:
        topic: What to find out about.
    """
    await asyncio.sleep(RESEARCH_SECONDS)
    return f"{topic} are well documented (demo notes)"


EMPLOYEES = 1204


@function_tool(needs_approval=True)
def send_company_email(subject: str) -> str:
    """Email every employee of the company. Needs the user's approval.

    Args:
        subject: The subject line of the email.
    """
    # A demo: it reads as consequential, and does nothing at all.
    return (
        f"the email \u201c{subject}\u201d went out to all {EMPLOYEES:,} employees "
        "(not really: this is a demo)"
    )


DEMO_TOOLS: list[FunctionTool] = [current_time, calculate, research, send_company_email]
