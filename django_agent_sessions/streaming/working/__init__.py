"""Working: runs away from a tab. A task worker's run host (``host``), the task that
executes a run's start or resumption once (``tasks``, ``execution``, ``requests``), and
starting a run from code (``starting``). It uses ``visiting`` and ``running``.
"""
