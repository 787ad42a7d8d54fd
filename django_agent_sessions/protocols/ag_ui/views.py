"""The AG-UI endpoint: ``POST`` a ``RunAgentInput``, read the run as AG-UI events.

Under the project's include (``path("ag-ui/", include(
"django_agent_sessions.protocols.ag_ui.urls"))``), the same rules as the chat's HTTP
transport: a signed-in user (or, with ``ALLOW_ANONYMOUS``, a visitor with a saved Django
session), Django's CSRF protection (``X-CSRFToken``), the same ``Visitor``. What is
refused before a run can be asked for is an HTTP status (``400`` not a
``RunAgentInput``, ``401``, ``403`` someone else's thread, ``413``); everything else is
in the stream (``RUN_ERROR`` with the wire's codes: ``busy``, ``rate_limited``,
``quota_exceeded``, ...).
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_POST

from django_agent_sessions.conf import app_settings
from django_agent_sessions.protocols.ag_ui import inputs
from django_agent_sessions.protocols.ag_ui.stream import RunStream
from django_agent_sessions.sse.following import response_channel
from django_agent_sessions.sse.views import ERROR_STATUS, detached
from django_agent_sessions.sse.visitor import Refused, visitor_for
from django_agent_sessions.streaming import frames

_REFUSED = {401: "not_signed_in", 403: "forbidden"}


@require_POST
@csrf_protect  # whatever the project's middleware
async def run(request: HttpRequest) -> HttpResponseBase:
    try:
        body = request.body.decode("utf-8")
        run_input = inputs.parse(body, app_settings.MAX_MESSAGE_BYTES)
        visitor = await detached(visitor_for(request, run_input.thread_id))
    except UnicodeDecodeError:
        return _error("invalid_json", _("The frame is not valid JSON."), 400)
    except frames.BadFrame as bad:
        return _error(bad.code, bad.message, ERROR_STATUS.get(bad.code, 400))
    except Refused as refused:
        message = (
            _("Please log in again.")
            if refused.status == 401
            else _("This conversation is not yours.")
        )
        return _error(_REFUSED[refused.status], message, refused.status)
    channel_name = await response_channel(visitor, "ag_ui")
    asked = inputs.asked(run_input)
    stream = RunStream(visitor, channel_name, run_input.thread_id, run_input.run_id, asked)
    response = StreamingHttpResponse(stream, content_type=stream.encoder.get_content_type())
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: write each event as it comes
    # An empty Content-Encoding keeps GZipMiddleware away: it would hold events back.
    response["Content-Encoding"] = ""
    return response


def _error(code: str, message: str, status: int) -> JsonResponse:
    return JsonResponse({"code": code, "message": message}, status=status)
