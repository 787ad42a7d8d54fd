"""Run orders: a run asked for by code, a schedule, or a tab whose run executes as a task.

A ``RunOrder`` keeps what the run must do (its input, agent and context) where any
process can read it, and which of its executions (the start, then each resumption after
approvals) a task has claimed. The run record (``AgentRun``) stays the truth of its
state; the order is what a task worker needs to execute it once.
"""
