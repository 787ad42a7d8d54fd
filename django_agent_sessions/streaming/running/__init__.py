"""Running: a run's life, from its task's start to its one end.

``run_task`` is a run's task from its start (or its resumption after decisions) to its
pause or end; ``traced`` is that body inside its span; ``streamed_run`` turns the SDK's
stream into wire events; ``active_runs`` is the running task in this process (its
publishing, control channel and lease); ``lifecycle`` owns every transition of the
record and the one ``end()``; ``outcomes`` says how a run ended; ``paused``,
``spending``, ``message`` and ``empty_history`` serve the task; ``lost`` (the sweep)
and ``drain`` (deploys) end runs nobody else will. It uses ``delivery`` and ``wire``.
"""
