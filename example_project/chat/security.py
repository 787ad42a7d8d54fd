"""A strict Content-Security-Policy for the chat pages, without a new dependency.

Scripts and styles come only from this site's static files (no ``unsafe-inline``), so an
injected ``<script>`` or ``style`` attribute in model output could not run even if it
ever reached the page unescaped. The websocket is allowed to this host only.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase


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


class ContentSecurityPolicyMiddleware:
    """Give every response outside the admin the strict policy (the admin keeps Django's).

    The packaged chat has no inline script or style, so it runs under this policy as is.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is None or "admin" not in match.namespaces:
            response.headers.setdefault("Content-Security-Policy", policy_for(request))
        return response
