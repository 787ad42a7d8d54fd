"""Temporary chats: their settings (``settings.py``) and system checks (``checks.py``).

What they leave out and how they are removed is ``store.temporary``'s; following the
pages open on one is ``streaming.following.temporary``'s.
"""
