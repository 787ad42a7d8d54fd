"""A person's message as a run takes it: its text, and the files it carries.

A message without files is given to the Runner as its text, as it always was; one with
files as one user message whose content is the text, then each file's part
(``store.uploads.for_message``). The chat shows the files beside the text, never the
data: ``files`` are the attachments' ids, names, types and sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class UserInput:
    text: str
    parts: tuple[dict[str, Any], ...] = ()  # the SDK's input_image / input_file parts
    files: tuple[dict[str, Any], ...] = ()  # the same files as the chat shows them

    def model_input(self) -> str | list[Any]:
        """What ``Runner.run_streamed`` is given."""
        if not self.parts:
            return self.text
        text_part = [{"type": "input_text", "text": self.text}] if self.text else []
        return [{"role": "user", "content": [*text_part, *self.parts]}]

    def shown(self, client_id: str = "") -> dict[str, Any]:
        """The message's ``item.completed`` item (the wire's live item)."""
        item: dict[str, Any] = {"kind": "message", "role": "user", "text": self.text}
        if self.files:
            item["files"] = list(self.files)
        if client_id:
            item["client_id"] = client_id
        return item
