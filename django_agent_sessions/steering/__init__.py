"""Steering: a message sent during a reply joins the running run at its next model call
(``AGENT_SESSIONS["WHILE_RUNNING"] = "steer"``, docs/conversations.md)."""
