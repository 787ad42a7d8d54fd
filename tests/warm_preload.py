"""What the suite's warm interpreter imports once (``tests/warm_start.py``): the imports
that make a process of the suite slow to start, and nothing that reads settings, opens a
connection, or starts a thread or an event loop (a forked process must not share one).

The Agents SDK alone takes about three seconds of CPU to import (openai's types, mcp's
pydantic models); Django, Channels and the database drivers most of the rest.
"""

import agents  # noqa: F401
import asgiref.sync  # noqa: F401
import channels.db
import channels.generic.websocket
import channels.layers  # noqa: F401
import django.core.handlers.asgi
import django.db.models
import django.test  # noqa: F401
import psycopg  # noqa: F401
import redis.asyncio  # noqa: F401
import uvicorn.main  # noqa: F401
