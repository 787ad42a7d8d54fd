"""The values the shortcuts format themselves, and the CPython internals they rely on: an
operation's timestamps are the text Django would store, and the fast JSON encoder and
decoder write and accept exactly what ``json`` does.
"""

from __future__ import annotations

import json
from datetime import datetime
from datetime import timezone as dt_timezone

import pytest
from django.db import connection
from django.utils import timezone as django_timezone

from django_agent_sessions import serialization
from django_agent_sessions.store.clock import UPDATED_AT_RESOLUTION, read_clock


@pytest.mark.parametrize(
    "overrides",
    [{}, {"USE_TZ": False}, {"TIME_ZONE": "America/Sao_Paulo"}],
    ids=["utc", "naive", "local-zone"],
)
def test_an_operations_clock_is_what_django_would_store(overrides, settings, monkeypatch):
    for name, value in overrides.items():
        setattr(settings, name, value)
    if "TIME_ZONE" in overrides:
        # The database's own time zone (DATABASES TIME_ZONE) decides the stored text.
        monkeypatch.setitem(connection.settings_dict, "TIME_ZONE", overrides["TIME_ZONE"])
        connection.__dict__.pop("timezone", None)
        connection.__dict__.pop("timezone_name", None)
    try:
        clock = read_clock(connection)
        adapt = connection.ops.adapt_datetimefield_value
        assert clock.stamp == adapt(clock.now)
        assert clock.threshold == adapt(clock.now - UPDATED_AT_RESOLUTION)
    finally:
        connection.__dict__.pop("timezone", None)
        connection.__dict__.pop("timezone_name", None)


@pytest.mark.parametrize(
    "moments",
    [
        # Whole seconds and microseconds, a year's end crossed, and the clock set back.
        ["2026-12-31T23:59:59", "2026-12-31T23:59:59.000007", "2027-01-01T00:00:00.999999"],
        ["2027-01-01T00:00:00", "2027-01-01T00:00:00.5", "2026-12-31T23:59:59.25"],
        # An aware time in another zone (a mocked now()), then UTC in the same second.
        ["2027-07-01T14:00:00.000005+02:00", "2027-07-01T12:00:00.000005"],
    ],
)
def test_the_utc_clock_formats_each_second_once_and_as_django_does(moments, monkeypatch):
    adapt = connection.ops.adapt_datetimefield_value
    assert not UPDATED_AT_RESOLUTION.microseconds  # what the per-second texts rely on
    for text in moments:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt_timezone.utc)
        monkeypatch.setattr(django_timezone, "now", lambda moment=moment: moment)
        clock = read_clock(connection)
        assert (clock.now, clock.stamp) == (moment, adapt(moment))
        assert clock.threshold == adapt(moment - UPDATED_AT_RESOLUTION)


def test_cpython_json_encoder_assumption():
    assert serialization._FAST_ENCODE is not None, "json.encoder.c_make_encoder changed"


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": "plain"},
        {"content": 'é 🎉 \u0000 \u2028 " \\ \t عربى', "n": [1, -1, 0, 10**30]},
        {"f": [1.0, -0.0, 1e300, 2.5e-308, 0.1], "b": [True, False, None]},
        {"nested": {"a": [{"b": [[], {}]}]}, "": ""},
        {"keys": {"z": 1, "a": 2, "é": 3}},
    ],
)
def test_fast_encoder_output_is_identical(item):
    assert serialization.dumps(item) == json.dumps(
        item, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


def test_fast_encoder_refuses_nan():
    assert serialization._FAST_ENCODE is not None
    with pytest.raises(ValueError, match="Out of range float"):
        serialization._FAST_ENCODE({"x": float("nan")})


@pytest.mark.parametrize(
    "payload",
    [
        '{"a":1}',
        ' {"a":1}',
        '{"a":1} ',
        '{"a":1}\n',
        '{"a":1}{"b":2}',
        '{"a":1',
        "",
        "nul",
        "\ufeff{}",
        "[1,2.50,-0,1e400]",
        '"\\ud800"',
        '{"a":NaN}',
        "3",
        "null",
    ],
)
def test_fast_decoding_decides_as_json_loads(payload):
    try:
        expected = [json.loads(payload)]
    except ValueError:
        expected = []
    assert serialization.decode_payloads([payload]) == expected
