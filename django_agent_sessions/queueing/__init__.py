"""Queued messages: what a person sent during a reply with ``WHILE_RUNNING = "queue"``,
kept in the database until the reply ends, then sent as an ordinary run
(docs/conversations.md)."""
