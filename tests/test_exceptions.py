"""The app's exceptions (``exceptions.py``): what each is, for the code that catches it."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from django_agent_sessions.exceptions import (
    FeedbackRejected,
    ItemRejected,
    SessionOwnershipError,
    UploadRefused,
)


def test_another_users_conversation_is_a_permission_denied_so_a_view_answers_403():
    assert issubclass(SessionOwnershipError, PermissionDenied)
    assert not issubclass(SessionOwnershipError, ValueError)


@pytest.mark.parametrize("rejected", [ItemRejected, FeedbackRejected, UploadRefused])
def test_refused_input_is_a_value_error(rejected):
    assert issubclass(rejected, ValueError)
    assert not issubclass(rejected, PermissionDenied)


def test_a_refused_upload_has_a_stable_code_and_a_message_for_people():
    refused = UploadRefused("too_large", "This file is larger than 10 MB.")
    assert refused.code == "too_large"
    assert str(refused) == "This file is larger than 10 MB."
    with pytest.raises(ValueError, match="larger than 10 MB"):
        raise refused
