"""A strict Content-Security-Policy for the chat pages, without a new dependency.

Scripts and styles come only from this site's static files (no ``unsafe-inline``), so an
injected ``<script>`` or ``style`` attribute in model output could not run even if it
ever reached the page unescaped. The websocket is allowed to this host only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase

_View = TypeVar("_View", bound=Callable[..., Any])


def policy_for(request: HttpRequest) -> str:
    host = request.get_host()  # validated against ALLOWED_HOSTS by get_host()
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self'",
            f"connect-src 'self' ws://{host} wss://{host}",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ]
    )


def _with_policy(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    response.headers.setdefault("Content-Security-Policy", policy_for(request))
    return response


def content_security_policy(view: _View) -> _View:
    """Decorate a sync or async view so that its responses carry the policy."""
    if iscoroutinefunction(view):

        async def async_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            return _with_policy(request, await view(request, *args, **kwargs))

        wrapped: Any = markcoroutinefunction(wraps(view)(async_wrapper))
    else:

        def sync_wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            return _with_policy(request, view(request, *args, **kwargs))

        wrapped = wraps(view)(sync_wrapper)
    return wrapped  # type: ignore[no-any-return]
