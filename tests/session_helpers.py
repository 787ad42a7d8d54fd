"""Helpers for the DjangoSession tests: numbered user messages, and the texts of items."""

from __future__ import annotations

from tests.conftest import user_message


def numbered(n: int) -> list[dict[str, str]]:
    return [user_message(f"message {i}") for i in range(n)]


def texts(items: list) -> list[str]:
    return [item["content"] for item in items]
