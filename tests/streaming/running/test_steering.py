"""``running.steering``: the filter puts the messages it took back where they entered on
every later model call, stores them once, shows each; nothing changes outside steer mode."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, RunConfig
from agents.run_config import CallModelData, ModelInputData

from django_agent_sessions.store import steering as store_steering
from django_agent_sessions.streaming.running import steering


class Session:
    def __init__(self) -> None:
        self.added: list[Any] = []

    async def add_items(self, items: list[Any]) -> None:
        self.added.extend(items)


def call(items: list[Any]) -> CallModelData[Any]:
    data = ModelInputData(input=list(items), instructions=None)
    return CallModelData(model_data=data, agent=Agent(name="A"), context=None)


async def test_messages_are_put_back_where_they_entered(monkeypatch: Any) -> None:
    waiting = [[store_steering.Steer("one", "c-1")], [], [store_steering.Steer("two", "")]]

    async def claim(run_pk: int) -> list[store_steering.Steer]:
        return waiting.pop(0)

    monkeypatch.setattr(store_steering, "claim", claim)
    shown: list[dict[str, Any]] = []
    session = Session()
    steer = steering.Steering(1, session, shown.append)
    assert steer.config(None).call_model_input_filter == steer.filter
    one, two = {"role": "user", "content": "one"}, {"role": "user", "content": "two"}
    first = await steer.filter(call(["a", "b"]))
    assert first.input == ["a", "b", one]
    second = await steer.filter(call(["a", "b", "c"]))
    assert second.input == ["a", "b", one, "c"]
    third = await steer.filter(call(["a", "b", "c", "d"]))
    assert third.input == ["a", "b", one, "c", "d", two]
    assert session.added == [one, two]  # stored once each
    assert [item["text"] for item in shown] == ["one", "two"]
    assert shown[0] == {
        "kind": "message",
        "role": "user",
        "text": "one",
        "client_id": "c-1",
        "steered": True,
    }


@pytest.mark.parametrize("mode", ["busy", "interrupt"])
def test_other_modes_add_no_filter(settings: Any, mode: str) -> None:
    settings.AGENT_SESSIONS = {"WHILE_RUNNING": mode}

    class Run:
        run_config: RunConfig | None = None

        def show(self, item: dict[str, Any]) -> None: ...

    run: Any = Run()
    steering.take_steering(run, 1, None)
    assert run.run_config is None
    settings.AGENT_SESSIONS = {"WHILE_RUNNING": "steer"}
    steering.take_steering(run, 1, None)
    config: Any = getattr(run, "run_config", None)
    assert config.call_model_input_filter is not None
