"""AG-UI over the app's runs: a POST of ``RunAgentInput`` whose response streams the
run as AG-UI events (docs/protocols/ag-ui.md).

An adapter is a transport like ``sse/``: it decodes the request, authorises through the
same ``Visitor``, calls the same ``actions`` and follows the run with the same
``Follower``; what it adds is the translation of the wire's frames into AG-UI's events
(``translation``) and of stored history into AG-UI's messages (``messages``). It reads
and writes nothing of its own: a run started here is the packaged chat's run, in the
same rows.
"""
