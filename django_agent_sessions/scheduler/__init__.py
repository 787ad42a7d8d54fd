"""The scheduler: firing the scheduled runs that are due (``firing.fire_due``), from the
``agent_sessions_schedule`` command or the ``tasks.fire_due_schedules`` task, and the
checks of its settings.

Apart from ``schedules/`` (the row and its timing), which ``models`` imports: this
package starts runs, so it stands above ``store`` and ``streaming``.
"""
