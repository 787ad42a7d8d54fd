"""The floor of a chat over HTTP: a bare authenticated async Django view that takes the
message in a POST and streams the run back in that POST's own response.

This is what ChatKit's and the Vercel AI SDK's servers do, and the least any HTTP chat
pays for a first message: Django's request cycle behind the example's middleware on the
same daphne worker, the same agent and paced model, ``DjangoSession`` storing the same
items, and text deltas coalesced as the app coalesces them (``DELTA_FLUSH_SECONDS``), so
the floor writes no more events than the app. It has none of the app's guarantees: no
run record, no other tab sees the run, nothing survives the connection, no resume.

The run's database work goes to asgiref's one shared thread, as the app's transports'
does (``sse.views.detached``): on the request's own thread each of 200 chats would hold a
connection of its own, past PostgreSQL's ``max_connections`` in ``bin/services.sh``.

This module is the benchmark worker's URLconf: ``POST /_bench/floor/<session_id>/`` with
``{"text": ...}``, ``POST /_bench/settle/`` (``settling``), the AI SDK adapter's
(``ai-sdk/``, compared with the floor in the same rounds), then the example project's
own URLs.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from agents import Runner
from agents.stream_events import RawResponsesStreamEvent
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import include, path
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_POST

from benchmarks import settling
from benchmarks.streaming_app import build_agent
from django_agent_sessions import DjangoSession
from django_agent_sessions.conf import app_settings
from example_project.urls import urlpatterns as example_urlpatterns

_END = None


@require_POST
@csrf_protect
async def floor(request: HttpRequest, session_id: str) -> HttpResponseBase:
    user = await request.auser()
    if not user.is_authenticated:
        return HttpResponse(status=401)
    text = str(json.loads(request.body)["text"])
    session = DjangoSession(session_id, owner=user)
    events: asyncio.Queue[str | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    # In a context of its own: the shared database thread (see the module).
    contextvars.Context().run(loop.create_task, _run(text, session, events))
    response = StreamingHttpResponse(_written(events), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    return response


async def _run(text: str, session: DjangoSession, events: asyncio.Queue[str | None]) -> None:
    result = Runner.run_streamed(build_agent(), text, session=session)
    pending, flush_at = "", 0.0
    flush_seconds = float(app_settings.DELTA_FLUSH_SECONDS)
    try:
        async for event in result.stream_events():
            if isinstance(event, RawResponsesStreamEvent) and event.data.type.endswith(".delta"):
                if not pending:
                    flush_at = time.monotonic() + flush_seconds
                pending += getattr(event.data, "delta", "")
            if pending and time.monotonic() >= flush_at:
                events.put_nowait(_event({"type": "text.delta", "delta": pending}))
                pending = ""
        if pending:
            events.put_nowait(_event({"type": "text.delta", "delta": pending}))
        events.put_nowait(_event({"type": "run.completed"}))
    except Exception as error:  # the client reports it
        events.put_nowait(_event({"type": "run.failed", "error": repr(error)}))
    events.put_nowait(_END)


async def _written(events: asyncio.Queue[str | None]) -> AsyncIterator[str]:
    """Everything queued, as one write (as the app's stream writes), until the end."""
    while (chunk := await events.get()) is not _END:
        ended = False
        while not events.empty() and not ended:
            following = events.get_nowait()
            ended = following is _END
            chunk += following or ""
        yield chunk
        if ended:
            return


def _event(content: dict[str, Any]) -> str:
    return f"data: {json.dumps(content)}\n\n"


urlpatterns = [
    path("_bench/floor/<str:session_id>/", floor),
    path("ai-sdk/", include("django_agent_sessions.protocols.ai_sdk.urls")),
    path("ag-ui/", include("django_agent_sessions.protocols.ag_ui.urls")),
    *settling.urlpatterns,
    *example_urlpatterns,
]
