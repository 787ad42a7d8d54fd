"""What a run spends, model by model, as its model calls end.

``Spending`` is the run's ``RunHooks``: each model response's usage is added to the
model that gave it (a handoff to an agent on another model starts a second share). The
shares not written yet are taken by each write of the run's record (its lease renewals,
its pause, its end), so a run whose worker dies still shows what it spent up to its last
renewal. A response cut short by Stop reports no usage: what it spent is not known.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, RunConfig, RunContextWrapper, RunHooks
from agents.items import ModelResponse
from agents.models.default_models import get_default_model
from agents.usage import Usage

from django_agent_sessions.store.usage import Spent, usage_counts


def model_name(agent: Agent[Any], run_config: RunConfig | None = None) -> str:
    """The name of the model ``agent`` calls, as the SDK picks it (the run's model first)."""
    chosen: Any = run_config.model if run_config is not None else None
    if chosen is None:
        chosen = agent.model
    if chosen is None:
        return get_default_model()
    if isinstance(chosen, str):
        return chosen
    # A Model object: OpenAI's and LiteLLM's keep the name in ``model``.
    name = getattr(chosen, "model", None)
    return name if isinstance(name, str) and name else type(chosen).__name__


class Spending(RunHooks[Any]):
    """The run's usage: ``totals`` (the run's own, restored ones included) and, by model,
    what was spent since the last write."""

    def __init__(self, run_config: RunConfig | None = None, ceiling: int | None = None) -> None:
        self.run_config = run_config
        self.ceiling = ceiling
        self.totals: Usage | None = None  # None until a model call ends (a resumed run's
        # totals are the stored ones until then)
        self._unsaved: dict[str, dict[str, int]] = {}

    @property
    def over_ceiling(self) -> bool:
        """Past the most tokens one run may spend (``QUOTAS["RUN_TOKENS"]``)."""
        if self.ceiling is None or self.totals is None:
            return False
        return self.totals.total_tokens > self.ceiling

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        self.add(model_name(agent, self.run_config), response.usage)
        self.totals = context.usage  # the SDK's running total, across a pause too

    def add(self, model: str, usage: Usage) -> None:
        share = self._unsaved.setdefault(model, dict.fromkeys(usage_counts(Usage()), 0))
        for name, count in usage_counts(usage).items():
            share[name] += count

    def take(self) -> Spent:
        """What to write now; ``give_back`` it if the write fails."""
        unsaved, self._unsaved = self._unsaved, {}
        return Spent(None if self.totals is None else usage_counts(self.totals), unsaved)

    def give_back(self, spent: Spent) -> None:
        for model, counts in spent.by_model.items():
            share = self._unsaved.setdefault(model, dict.fromkeys(counts, 0))
            for name, count in counts.items():
                share[name] += count
