"""``DjangoSession`` keeps inline files in Django's storage and gives items back exactly."""

from __future__ import annotations

import base64
import copy
import hashlib
import json

import pytest
from asgiref.sync import sync_to_async

from django_agent_sessions import retention
from django_agent_sessions.files import inline
from django_agent_sessions.models import AgentSession, Attachment, SessionItem
from tests.attachment_helpers import (
    data_url,
    image_message,
    png,
    stored_files,
)
from tests.conftest import assistant_message, user_message

pytestmark = pytest.mark.django_db(transaction=True)

FIVE_MB_PNG = png(1300, 1290)  # 5,031,000 bytes of noise: 6.7 MB of base64


async def _rows(session_id: str) -> list[str]:
    return [
        payload
        async for payload in SessionItem.objects.filter(session__session_id=session_id)
        .order_by("id")
        .values_list("payload", flat=True)
    ]


async def test_a_5_mb_png_comes_back_byte_identical_from_a_row_of_at_most_2_kb(
    make_session, file_storage
):
    session = make_session()
    message = image_message(FIVE_MB_PNG)
    added = copy.deepcopy(message)
    await session.add_items([message, assistant_message("A field of noise.")])

    assert message == added  # add_items changed nothing of the caller's item
    got = await session.get_items()
    assert got == [added, assistant_message("A field of noise.")]
    url = got[0]["content"][1]["image_url"]
    assert base64.b64decode(url.removeprefix("data:image/png;base64,")) == FIVE_MB_PNG
    rows = await _rows(session.session_id)
    assert len(rows[0].encode()) <= 2048, len(rows[0])
    attachment = await Attachment.objects.aget(session__session_id=session.session_id)
    assert (attachment.content_type, attachment.size) == ("image/png", len(FIVE_MB_PNG))
    assert attachment.sha256 == hashlib.sha256(FIVE_MB_PNG).hexdigest()
    assert [path.read_bytes() for path in stored_files(file_storage)] == [FIVE_MB_PNG]


async def test_the_same_file_is_stored_once_per_conversation(make_session, file_storage):
    image = png(200, 200)
    first, second = make_session(), make_session("conv-other")
    await first.add_items([image_message(image), image_message(image, "again")])
    await first.add_items([image_message(image, "and again")])
    await second.add_items([image_message(image)])

    assert await Attachment.objects.filter(session__session_id=first.session_id).acount() == 1
    assert await Attachment.objects.acount() == 2
    assert len(stored_files(file_storage)) == 2
    texts = [item["content"][0]["text"] for item in await first.get_items()]
    assert texts == ["What is in this picture?", "again", "and again"]
    assert all(
        item["content"][1]["image_url"] == data_url(image) for item in await first.get_items()
    )


async def test_a_pdf_given_as_plain_base64_keeps_its_name_and_comes_back_exactly(
    make_session, file_storage
):
    pdf = b"%PDF-1.7\n" + bytes(range(256)) * 400
    part = {
        "type": "input_file",
        "file_data": base64.b64encode(pdf).decode(),
        "filename": "report.pdf",
    }
    tool_output = {"type": "function_call_output", "call_id": "c1", "output": [part]}
    session = make_session()
    await session.add_items([tool_output])
    assert await session.get_items() == [tool_output]
    attachment = await Attachment.objects.aget()
    assert (attachment.name, attachment.content_type) == ("report.pdf", "application/pdf")


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(data_url(b"small"), id="below-the-threshold"),
        pytest.param("data:image/png;base64," + "QUJD\n" * 20_000, id="not-canonical-base64"),
        pytest.param("https://example.com/" + "a" * 100_000, id="a-remote-url"),
    ],
)
async def test_what_cannot_come_back_exactly_from_a_file_stays_in_the_row(
    make_session, file_storage, value
):
    item = {"role": "user", "content": [{"type": "input_image", "image_url": value}]}
    session = make_session()
    await session.add_items([item])
    assert await session.get_items() == [item]
    assert await Attachment.objects.acount() == 0
    assert not (await _rows(session.session_id))[0].startswith(inline.MARK)


async def test_pop_gives_back_the_whole_item(make_session, file_storage):
    session = make_session()
    message = image_message(png(300, 300))
    await session.add_items([user_message("hello"), copy.deepcopy(message)])
    assert await session.pop_item() == message
    assert await session.get_items() == [user_message("hello")]


async def test_clearing_and_deleting_remove_the_files(make_session, file_storage):
    kept, cleared, deleted = make_session("conv-kept"), make_session("conv-c"), make_session("x")
    for number, session in enumerate((kept, cleared, deleted)):
        await session.add_items([image_message(png(200 + number, 200))])
    assert len(stored_files(file_storage)) == 3

    await cleared.clear_session()
    pk = await AgentSession.objects.filter(session_id="x").values_list("pk", flat=True).aget()
    await sync_to_async(retention.delete_conversations)([pk])

    assert await Attachment.objects.acount() == 1
    assert len(stored_files(file_storage)) == 1
    assert (await kept.get_items())[0] == image_message_of(stored_files(file_storage)[0])


def image_message_of(path) -> dict[str, object]:
    return image_message(path.read_bytes())


async def test_the_admin_transcript_names_the_file_instead_of_loading_it(
    make_session, file_storage
):
    from django_agent_sessions.admin import transcript

    session = make_session()
    await session.add_items([image_message(png(300, 300))])
    row = await SessionItem.objects.aget()
    shown = transcript.entry(row.pk, row.created_at, row.payload)
    attachment = await Attachment.objects.aget()
    assert f"[stored file {attachment.storage_name}]" in shown.raw
    assert len(shown.raw) < 2048


async def test_an_export_carries_the_files_inline_and_whole(make_session, file_storage):
    from django_agent_sessions import transfer

    session = make_session()
    message = image_message(png(300, 300))
    await session.add_items([copy.deepcopy(message)])
    conversations = AgentSession.objects.filter(session_id=session.session_id)
    text = await sync_to_async(lambda: "".join(transfer.export_chunks(conversations, "json")))()
    (exported,) = json.loads(text)["conversations"]
    assert [entry["item"] for entry in exported["items"]] == [message]


async def test_an_import_stores_the_files_again(make_session, file_storage):
    from django_agent_sessions import transfer

    session = make_session("conv-exported")
    message = image_message(png(300, 300))
    await session.add_items([copy.deepcopy(message), assistant_message("Noise.")])
    conversations = AgentSession.objects.filter(session_id="conv-exported")
    text = await sync_to_async(lambda: "".join(transfer.export_chunks(conversations, "json")))()
    await sync_to_async(retention.delete_conversations)(
        [pk async for pk in conversations.values_list("pk", flat=True)]
    )
    assert stored_files(file_storage) == []

    await sync_to_async(transfer.import_conversations)(transfer.parse(text, "json"))
    assert await session.get_items() == [message, assistant_message("Noise.")]
    assert len((await _rows("conv-exported"))[0]) < 2048
    assert len(stored_files(file_storage)) == 1

    # Importing the same file again conflicts (the id exists), and stores nothing more.
    with pytest.raises(transfer.TransferError, match="already exists"):
        await sync_to_async(transfer.import_conversations)(transfer.parse(text, "json"))
    assert len(stored_files(file_storage)) == 1
