"""Titles written after a conversation's first exchange (``AGENT_SESSIONS["TITLES"]``):
what the setting asks for (``settings``), its check (``checks``) and the writing of a
title by a model or a function (``writing``). When it is written, and how a rename by
the person wins, is ``streaming``'s (``running/titling.py``) and ``store.titles``'."""
