"""The demo model describes the files a message carries, from the bytes it was given."""

from __future__ import annotations

import struct

import pytest
from agents import Agent, Runner

from example_project.demo_files import image_size
from example_project.demo_model import DemoModel
from tests.attachment_helpers import files_message, png


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00" * 8


def _jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    frame = b"\xff\xc0" + struct.pack(">HBHH", 11, 8, height, width) + b"\x01\x01\x11\x00"
    return b"\xff\xd8" + app0 + frame + b"\xff\xd9"


def _webp_lossless(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    chunk = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + struct.pack("<I", bits)
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png(64, 32), (64, 32)),
        (_gif(7, 9), (7, 9)),
        (_jpeg(640, 480), (640, 480)),
        (_webp_lossless(300, 200), (300, 200)),
        (b"plain text", None),
    ],
)
def test_image_sizes_are_read_from_the_bytes(data, size):
    assert image_size(data) == size


async def test_the_reply_names_each_file_with_its_type_size_and_dimensions():
    image, notes = png(40, 20), b"milk, eggs\n"
    message = files_message("What did I send?", image=image, file=("list.txt", "text/plain", notes))
    agent = Agent(name="Demo", model=DemoModel(word_delay=0.0))
    result = await Runner.run(agent, [message])
    assert result.final_output.startswith(
        f"I received 2 files: an image (image/png, {len(image):,} bytes, 40 x 20 pixels); "
        f"list.txt (text/plain, {len(notes)} bytes). You said: “What did I send?”."
    )
