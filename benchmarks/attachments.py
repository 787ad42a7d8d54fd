"""What images in storage cost ``get_items``: a conversation with them against the same
conversation without them, interleaved in one process.

    python -m benchmarks.attachments [--db sqlite|postgres] [--blocks 15] [--ops 20] [--smoke]

Two conversations of 200 items: in ``images``, 10 of the user messages carry a 5 MB PNG
(as a data URL, which ``DjangoSession`` stores as a file) after their text part; in
``plain`` the same messages have their text part only. Each block times ``ops`` calls of
``get_items()`` on each (the order alternates), and gives one ratio (images / plain) of
the two medians; the table
shows the median ratio with a bootstrap 95% interval (``parity.bootstrap_ci``). The
images' first read from storage is outside the blocks: what is measured is a process
that has read them once (``AGENT_SESSIONS["ATTACHMENTS"]["CACHE_BYTES"]``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.backends import DjangoSessionBackend
from benchmarks.parity import bootstrap_ci
from benchmarks.sessions import RESULTS, _discard, _prepare, machine
from benchmarks.targets import Target

ITEMS, IMAGES, IMAGE_SIDE = 200, 10, 1295  # a 1295 x 1295 RGB PNG: 5.0 MB
TARGET = 1.2


def _conversation(with_images: bool, side: int) -> list[Any]:
    from tests.attachment_helpers import image_message, png

    every = ITEMS // IMAGES
    items: list[Any] = []
    for index in range(ITEMS):
        if index % 2:
            items.append({"role": "assistant", "content": f"Answer {index}: " + "words " * 30})
        elif index % every == 0:
            message = image_message(png(side, side), f"Question {index}")
            if not with_images:  # the same message without its image
                message["content"] = message["content"][:1]
            items.append(message)
        else:
            items.append({"role": "user", "content": f"Question {index}"})
    return items


async def _median_seconds(session: Any, ops: int) -> float:
    samples = []
    for _ in range(ops):
        start = time.perf_counter()
        await session.get_items()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def run(blocks: int, ops: int, side: int) -> dict[str, Any]:
    from django_agent_sessions import DjangoSession

    images, plain = DjangoSession("bench-images"), DjangoSession("bench-plain")
    await images.add_items(_conversation(True, side))
    await plain.add_items(_conversation(False, side))
    first = time.perf_counter()
    got = await images.get_items()
    first_read = time.perf_counter() - first
    assert got == _conversation_shape(got), "get_items did not give the items back"
    ratios: list[float] = []
    medians: dict[str, list[float]] = {"images": [], "plain": []}
    for block in range(blocks):
        order = [("images", images), ("plain", plain)]
        for name, session in order if block % 2 == 0 else order[::-1]:
            medians[name].append(await _median_seconds(session, ops))
        ratios.append(medians["images"][-1] / medians["plain"][-1])
    low, high = bootstrap_ci(ratios)
    return {
        "items": ITEMS,
        "images": IMAGES,
        "image_bytes": _png_size(side),
        "blocks": blocks,
        "ops": ops,
        "first_read_ms": round(first_read * 1000, 1),
        "images_median_ms": round(statistics.median(medians["images"]) * 1000, 3),
        "plain_median_ms": round(statistics.median(medians["plain"]) * 1000, 3),
        "ratio": round(statistics.median(ratios), 3),
        "ci95": [round(low, 3), round(high, 3)],
        "target": TARGET,
        "met": statistics.median(ratios) <= TARGET,
    }


def _png_size(side: int) -> int:
    from tests.attachment_helpers import png

    return len(png(side, side))


def _conversation_shape(got: list[Any]) -> list[Any]:
    """``got`` if its image messages hold whole PNG data URLs, else ``[]``."""
    urls = [
        part["image_url"]
        for item in got
        if isinstance(item.get("content"), list)
        for part in item["content"]
        if part.get("type") == "input_image"
    ]
    whole = len(urls) == IMAGES and all(
        url.startswith("data:image/png;base64,iVBOR") for url in urls
    )
    return got if whole else []


def markdown(result: dict[str, Any], db: str) -> str:
    verdict = "met" if result["met"] else "NOT met"
    return (
        "| get_items(), 200 items | median ms |\n|---|---|\n"
        f"| with 10 x {result['image_bytes'] / 1e6:.1f} MB images "
        f"| {result['images_median_ms']} |\n"
        f"| without them | {result['plain_median_ms']} |\n\n"
        f"{db}: ratio {result['ratio']} (95% CI {result['ci95'][0]}-{result['ci95'][1]}), "
        f"target <= {TARGET}: {verdict}. First read of the images from storage: "
        f"{result['first_read_ms']} ms."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default="sqlite", choices=["sqlite", "postgres"])
    parser.add_argument("--blocks", type=int, default=15)
    parser.add_argument("--ops", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="small images, few blocks")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    blocks, ops, side = (3, 3, 300) if args.smoke else (args.blocks, args.ops, IMAGE_SIDE)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%SZ")
    with tempfile.TemporaryDirectory(prefix="attachments-") as workdir:
        name = _prepare(args.db, "attachments", Path(workdir))
        try:
            DjangoSessionBackend(Target(args.db, name)).setup()
            from django.conf import settings

            settings.STORAGES = {
                **settings.STORAGES,
                "default": {
                    "BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": str(Path(workdir) / "media")},
                },
            }
            result = asyncio.run(run(blocks, ops, side))
        finally:
            _discard(args.db, name)
    result["machine"] = machine([args.db])
    text = markdown(result, args.db)
    print(text)
    report.write_results(args.out_dir, f"attachments-{args.db}", stamp, result, "Attachments", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
