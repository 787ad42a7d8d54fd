"""Adapters of other projects' chat protocols over the same runs.

Each adapter is a transport like ``sse/``: it decodes its protocol's requests into the
app's own actions (send a message, stop, decide an approval, resume) and encodes the
wire events a ``streaming.Follower`` gives it as its protocol's parts. Runs, their
records, ownership, rate limits and quotas are the app's, whichever front end asks:

- ``ai_sdk``: the Vercel AI SDK's UI message stream (``useChat``), docs/protocols/ai-sdk.md;
- ``ag_ui``: AG-UI's events for a ``RunAgentInput``, docs/protocols/ag-ui.md;
- ``chatkit``: OpenAI's ChatKit, a ``Store`` on the conversations' rows and a server
  that answers with the agent through ChatKit's own helpers, docs/protocols/chatkit.md.
"""
