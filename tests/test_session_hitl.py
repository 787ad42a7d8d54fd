"""The SDK's three-approval scenario (tests/sdk/scenarios) on DjangoSession as a chat uses
it: each turn on a new instance of the session, reloaded from the database."""

from __future__ import annotations

import pytest

from django_agent_sessions import DjangoSession
from tests.sdk.scenarios.test_hitl_session_scenario import (
    HITL_REJECTION_MSG,
    TOOL_ECHO,
    TOOL_NOTE,
    USER_MESSAGES,
    ScenarioStep,
    assert_counts,
    assert_step_output,
    execute_counts,
    make_scenario_model,
    run_scenario_step,
)

pytestmark = pytest.mark.django_db(transaction=True)

STEPS = [
    ScenarioStep("turn 1", USER_MESSAGES[0], TOOL_ECHO, "approve", f"approved:{USER_MESSAGES[0]}"),
    ScenarioStep(
        "turn 2 (reloaded)",
        USER_MESSAGES[1],
        TOOL_NOTE,
        "approve",
        f"approved_note:{USER_MESSAGES[1]}",
    ),
    ScenarioStep("turn 3 (rejected)", USER_MESSAGES[2], TOOL_ECHO, "reject", HITL_REJECTION_MSG),
]


async def test_three_approvals_on_a_session_reloaded_for_every_turn(session_id):
    execute_counts.clear()
    model = make_scenario_model()
    for turn, step in enumerate(STEPS, start=1):
        reloaded = DjangoSession(session_id)  # nothing carried over but the database
        result = await run_scenario_step(reloaded, model, step)
        assert_counts(result.items, turn)
        assert_step_output(result.items, result.approval_item, step)
    assert execute_counts == {TOOL_ECHO: 1, TOOL_NOTE: 1}
    assert len(await DjangoSession(session_id).get_items()) == len(result.items)
