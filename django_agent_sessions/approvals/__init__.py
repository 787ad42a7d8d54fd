"""Tool approvals: the model of a call that waits for a decision (``approvals.models``)."""
