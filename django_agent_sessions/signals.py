"""Signals for websocket runs, so that projects can bill, meter or audit them.

``run_started``: sent when a run's record is created, before the model is called.
    Arguments: ``run_id`` (str), ``session_id`` (the stored conversation id),
    ``agent_name`` (str), ``user`` (the connection's user; anonymous in anonymous mode),
    ``resumed`` (bool): sent again with True when a run that waited for tool approvals
    resumes (count runs by the False ones).

``run_finished``: sent after the record is finished, whatever the outcome.
    Arguments: ``run`` (the ``AgentRun``, with status, error and token counts),
    ``usage`` (dict: requests, input_tokens, output_tokens, total_tokens), ``user``,
    ``approvals``: for a run that waited for tool approvals, how each call was decided
    (list of dicts: call_id, name, arguments, decision, reason, decided_by, requested_at,
    decided_at); empty otherwise. A run that waits is not finished: this is sent once,
    when it ends (also when it is cancelled or expires while waiting).

``feedback_given``: sent when a person rates a reply, or changes a rating. Sender: the
    ``Feedback`` model. Arguments: ``feedback`` (the saved row), ``created`` (False when
    a rating was changed), ``user``.

The sender of the first two is the ``AgentRun`` model. Receivers may be sync or async functions; an
exception in one is logged and does not affect the run or the other receivers.
"""

from __future__ import annotations

from django.dispatch import Signal

run_started = Signal()
run_finished = Signal()
feedback_given = Signal()
