"""The include serves one URL, under its own namespace, for POSTs only."""

from __future__ import annotations

import pytest
from django.test import AsyncClient
from django.urls import reverse


def test_the_endpoint_is_named_under_the_include():
    assert reverse("agent_sessions_ag_ui:run") == "/ag-ui/"


@pytest.mark.django_db
async def test_only_a_post_is_allowed():
    response = await AsyncClient().get("/ag-ui/")
    assert response.status_code == 405
