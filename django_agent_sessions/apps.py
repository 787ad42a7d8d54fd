from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.utils.translation import gettext_lazy as _


class AgentSessionsConfig(AppConfig):
    name = "django_agent_sessions"
    verbose_name = _("Agent sessions")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registering checks has no side effect beyond Django's check registry. The
        # streaming checks are imported here, while only one thread runs: importing the
        # SDK lazily from a check raced runserver's threads into an import deadlock.
        from django_agent_sessions import checks as app_checks
        from django_agent_sessions.budgets import checks as budget_checks
        from django_agent_sessions.feedback import checks as feedback_checks
        from django_agent_sessions.files import checks as file_checks
        from django_agent_sessions.layers import checks as layer_checks
        from django_agent_sessions.scheduler import checks as schedule_checks
        from django_agent_sessions.sharing import checks as sharing_checks
        from django_agent_sessions.streaming import checks as streaming_checks
        from django_agent_sessions.task_backends import checks as run_checks
        from django_agent_sessions.telemetry import checks as telemetry_checks
        from django_agent_sessions.temporary import checks as temporary_checks
        from django_agent_sessions.titles import checks as title_checks

        checks.register(app_checks.check_settings)
        checks.register(app_checks.check_databases, checks.Tags.database)
        checks.register(file_checks.check_attachments)
        checks.register(feedback_checks.check_feedback_tags)
        checks.register(streaming_checks.check_streaming_settings)
        checks.register(layer_checks.check_stream_layer)
        checks.register(budget_checks.check_budgets)
        checks.register(telemetry_checks.check_telemetry)
        checks.register(schedule_checks.check_schedules)
        checks.register(run_checks.check_runs)
        checks.register(title_checks.check_titles)
        checks.register(temporary_checks.check_temporary)
        checks.register(sharing_checks.check_share_links)

        # A deleted attachment row takes its stored file once its transaction commits,
        # whichever ORM delete removed it (store.attachments; ChatKit's files alike, with
        # their thread or their owner: store.chatkit.attachments). Connecting is all this does.
        from django.db.models.signals import post_delete

        from django_agent_sessions.chatkit_rows.models import ChatKitAttachment
        from django_agent_sessions.files.models import Attachment
        from django_agent_sessions.store import attachments
        from django_agent_sessions.store.chatkit import attachments as chatkit_files

        post_delete.connect(
            attachments.attachment_deleted,
            sender=Attachment,
            dispatch_uid="django_agent_sessions.attachment_deleted",
        )
        post_delete.connect(
            chatkit_files.attachment_deleted,
            sender=ChatKitAttachment,
            dispatch_uid="django_agent_sessions.chatkit_attachment_deleted",
        )

        # A run's recorded end sends its conversation's next queued message, wherever the
        # end was recorded (WHILE_RUNNING = "queue"; a no-op in the other modes).
        from django_agent_sessions import signals

        signals.run_finished.connect(send_queued, dispatch_uid="django_agent_sessions.send_queued")


async def send_queued(sender: Any, run: Any, **kwargs: Any) -> None:
    """``run_finished``: the next queued message of the run's conversation, if any."""
    from django_agent_sessions import streaming

    await streaming.after_end(run.session_id)
