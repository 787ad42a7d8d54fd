"""The Vercel AI SDK's UI message stream over the app's runs (docs/protocols/ai-sdk.md).

``path("ai-sdk/", include("django_agent_sessions.protocols.ai_sdk.urls"))`` serves what
``useChat``'s ``DefaultChatTransport`` asks for, under ``api: "/ai-sdk/chat"``:

- ``parts``: the wire's events as the protocol's chunks (no Django);
- ``messages``: a conversation's stored history as a ``UIMessage`` list (no Django);
- ``requests``: what a POST of the transport asks the app to do;
- ``stream``: one response's chunks, a ``streaming.Follower`` behind it;
- ``views``: the POST that sends (or decides), the GET that resumes, the GET that loads.
"""
