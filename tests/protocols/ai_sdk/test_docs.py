"""docs/protocols/ai-sdk.md: its page is the one the browser test builds and runs, and
its conformance table names every part of the protocol the client's schema has."""

from __future__ import annotations

import re
from pathlib import Path

from tests.protocols.ai_sdk.live import CLIENT_CACHE, CLIENT_SOURCES

DOC = Path(__file__).resolve().parents[3] / "docs" / "protocols" / "ai-sdk.md"


def test_the_doc_s_page_is_the_tested_page():
    blocks = re.findall(r"^```jsx\n(.*?)^```$", DOC.read_text(), re.S | re.M)
    assert blocks == [(CLIENT_SOURCES / "page.jsx").read_text()]


def test_the_conformance_table_names_every_part_of_the_client_s_schema():
    source = (CLIENT_CACHE / "node_modules" / "ai" / "dist" / "index.js").read_text()
    start = source.index("const uiMessageChunkSchema")
    schema = source[start : source.index("function isDataUIMessageChunk", start)]
    parts = set(re.findall(r'literal\("([a-z-]+)"\)', schema)) - {"text"}  # (a steering part's)
    table = DOC.read_text().split("## Conformance", 1)[1]
    named = set(re.findall(r"`([a-z-]+)`", table))
    assert parts - named == set()
