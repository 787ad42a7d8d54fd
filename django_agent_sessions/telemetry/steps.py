"""A run's steps before its first token, timed now and made spans when the run ends.

Runs start in bursts (a page of people pressing Send): the spans of each run's first
steps (its history read, the save of the person's message, the publish of
``run.started``) would be made on the event loop while the other runs of the burst
wait for their first tokens (about 0.03 ms each with the SDK's batch processor). Until its
first token reaches its tabs, a run's steps are only timed here (a few microseconds);
``emit`` makes them spans, with the times measured, under the span that was current
when each began, once the run's task is over. Later steps are spans at once, and so are
those of a task the run started that goes on after it (it keeps the run's context).

What a project sees differs in one way: the spans of an instrumentation made inside one
of these steps (a database query's, say) are children of the step's parent, beside the
step's span, rather than inside it.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Step:
    """A step that happened: its span to be, and the ``SpanLike`` calls made on it."""

    name: str
    attributes: dict[str, Any]
    parent: Any  # the span current when it began
    started_ns: int = field(default_factory=time.time_ns)
    ended_ns: int = 0
    events: list[tuple[str, Any, int]] = field(default_factory=list)
    error: BaseException | None = None

    def __enter__(self) -> Step:
        return self

    def __exit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        self.ended_ns = time.time_ns()
        self.error = error

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def set_attributes(self, attributes: Any) -> None:
        self.attributes.update(attributes)

    def add_event(self, name: str, attributes: Any = None) -> None:
        self.events.append((name, attributes, time.time_ns()))

    def is_recording(self) -> bool:
        return True


@dataclass
class StepLog:
    """The steps of one run; ``timing`` until its first token."""

    timing: bool = True
    steps: list[Step] = field(default_factory=list)

    def step(self, name: str, attributes: Any, parent: Any) -> Step:
        step = Step(name, dict(attributes or {}), parent)
        self.steps.append(step)
        return step


# The log of the run whose task (or a task it started) is running, if any.
current: ContextVar[StepLog | None] = ContextVar("agent_sessions_run_steps", default=None)
