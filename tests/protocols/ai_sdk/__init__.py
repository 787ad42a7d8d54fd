"""Tests of the AI SDK adapter: Python through Django's ASGI handler, Node and Chromium live."""
