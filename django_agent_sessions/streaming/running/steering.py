"""A run taking the messages sent during it (``WHILE_RUNNING = "steer"``).

The SDK calls ``RunConfig.call_model_input_filter`` just before each model call, with
the input it built: the history and the run's input, then the items the run made so far.
``Steering.filter`` claims the run's pending messages there (``store.steering``: one
query when none wait), appends them as user messages and stores them in the
conversation. In streaming mode the SDK saves each turn's items before the next turn's
model call (``run_loop``: the ``NextStepRunAgain`` save, then the next turn), so the
stored messages sit after the tool calls and outputs the model saw before them and
before its next reply: the history holds them where the model saw them.

The SDK builds every model input again from the run's input and its own items, which do
not include these messages: the filter keeps each one with the position it entered at
and puts it back there on every later call of the run. A resumed run (after approvals)
starts from the SDK's saved state without them: its model sees them again once the
history is read, by the next run.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from agents import RunConfig
from agents.run_config import CallModelData, ModelInputData

from django_agent_sessions.conf import app_settings
from django_agent_sessions.store import steering as store_steering
from django_agent_sessions.store.steering import Steer
from django_agent_sessions.streaming.running.message import UserInput
from django_agent_sessions.streaming.running.streamed_run import StreamedRun

logger = logging.getLogger(__name__)

STEER = "steer"  # the ``WHILE_RUNNING`` value (``visiting.while_running``)


def steers() -> bool:
    return bool(app_settings.WHILE_RUNNING == STEER)


class Steering:
    """The messages one run took, and the filter that takes more.

    ``show`` gets each claimed message's live item (``item.completed`` for every tab).
    """

    def __init__(self, run_pk: int, session: Any, show: Callable[[dict[str, Any]], None]):
        self.run_pk = run_pk
        self.session = session
        self.show = show
        # (the SDK input's length when they entered, the input items): in order.
        self._entered: list[tuple[int, list[Any]]] = []

    def config(self, base: RunConfig | None) -> RunConfig:
        """``base`` (or the defaults) with this filter before each model call."""
        return dataclasses.replace(base or RunConfig(), call_model_input_filter=self.filter)

    async def filter(self, data: CallModelData[Any]) -> ModelInputData:
        built = list(data.model_data.input)
        claimed = await store_steering.claim(self.run_pk)
        if claimed:
            items: list[Any] = [{"role": "user", "content": steer.text} for steer in claimed]
            if self.session is not None:
                # After what the SDK saved so far; before this call's reply, saved later.
                await self.session.add_items(items)
            self._entered.append((len(built), items))
            for steer in claimed:
                self.show(_shown(steer))
        data.model_data.input = self._with_entered(built)
        return data.model_data

    def _with_entered(self, built: list[Any]) -> list[Any]:
        out: list[Any] = []
        start = 0
        for position, items in self._entered:
            position = min(position, len(built))  # a handoff's filter may shorten it
            out.extend(built[start:position])
            out.extend(items)
            start = max(start, position)
        out.extend(built[start:])
        return out


def _shown(steer: Steer) -> dict[str, Any]:
    return {**UserInput(steer.text).shown(steer.client_id), "steered": True}


async def unsteered(run_pk: int) -> list[dict[str, str]]:
    """The run's messages no model call took, now taken: called once its end is
    recorded (``store.steering``: none can arrive after). The sending tab sends them as
    its next message."""
    try:
        left = await store_steering.claim(run_pk)
    except Exception:
        logger.exception("Could not read the messages left for run %s.", run_pk)
        return []
    return [{"text": steer.text, "client_id": steer.client_id} for steer in left]


def take_steering(streamed: StreamedRun, run_pk: int, session: Any) -> None:
    """In steer mode, ``streamed`` takes the messages sent during it (``Steering``)."""
    if steers():
        steering = Steering(run_pk, session, streamed.show)
        streamed.run_config = steering.config(streamed.run_config)


async def name_unsteered(run_pk: int, terminal: dict[str, Any]) -> None:
    """Name, in the run's end, the messages sent during it that no model call took, once
    its end is recorded (``unsteered``): the sending tab sends them as its next message."""
    if steers():
        left = await unsteered(run_pk)
        if left:
            terminal["unsteered"] = left
