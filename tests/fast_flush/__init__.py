"""The test suite's ``flush``: Django's, made fast for what pytest-django asks of it.

Listed in ``tests/settings.py``'s ``INSTALLED_APPS`` only; an app's management command
takes the place of Django's own of the same name. See ``management/commands/flush.py``.
"""
