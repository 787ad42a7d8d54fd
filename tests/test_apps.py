"""The app's configuration (``apps.py``): its name and label, and what ``ready()``
connects: the system checks of every part, and the deletion of a file with its row."""

from __future__ import annotations

from django.apps import apps
from django.core import checks
from django.db.models.signals import post_delete

from django_agent_sessions import checks as app_checks
from django_agent_sessions.budgets import checks as budget_checks
from django_agent_sessions.chatkit_rows.models import ChatKitAttachment
from django_agent_sessions.feedback import checks as feedback_checks
from django_agent_sessions.files import checks as file_checks
from django_agent_sessions.files.models import Attachment
from django_agent_sessions.layers import checks as layer_checks
from django_agent_sessions.store import attachments
from django_agent_sessions.store.chatkit import attachments as chatkit_files
from django_agent_sessions.streaming import checks as streaming_checks
from django_agent_sessions.telemetry import checks as telemetry_checks


def test_the_app_is_named_and_labelled_for_its_models():
    config = apps.get_app_config("django_agent_sessions")
    assert config.name == "django_agent_sessions"
    assert str(config.verbose_name) == "Agent sessions"
    assert config.default_auto_field == "django.db.models.BigAutoField"


def test_ready_registers_every_parts_system_check():
    registered = checks.registry.registry.get_checks(include_deployment_checks=True)
    assert {
        app_checks.check_settings,
        app_checks.check_databases,
        budget_checks.check_budgets,
        feedback_checks.check_feedback_tags,
        file_checks.check_attachments,
        layer_checks.check_stream_layer,
        streaming_checks.check_streaming_settings,
        telemetry_checks.check_telemetry,
    } <= set(registered)


def test_ready_connects_the_deletion_of_an_attachments_file():
    receivers = post_delete._live_receivers(Attachment)
    if isinstance(receivers, tuple):  # Django 5: (sync receivers, async receivers)
        receivers = [*receivers[0], *receivers[1]]
    assert attachments.attachment_deleted in receivers
    receivers = post_delete._live_receivers(ChatKitAttachment)
    if isinstance(receivers, tuple):
        receivers = [*receivers[0], *receivers[1]]
    assert chatkit_files.attachment_deleted in receivers
