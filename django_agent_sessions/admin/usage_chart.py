"""The usage page's chart: tokens per day as inline SVG, drawn on the server.

One bar per day that spent tokens, stacked by model (the eight models that spent most get
a colour each, the rest share one grey), on a scale rounded up to a readable number. No
script: the SVG is markup with a ``<title>`` and ``<desc>``, each bar and segment has a
``<title>`` (a tooltip), and the table under the chart holds every figure. Its text and
lines take the admin's colours through CSS (``usage.css``), so dark mode needs nothing.
"""

from __future__ import annotations

import math
from datetime import date

from django.utils import formats
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from django_agent_sessions.admin.usage_table import key_text
from django_agent_sessions.store.usage_report import Report, Row

WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 8, 10, 26
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
# Tableau 10: distinct, and readable on the admin's light and dark backgrounds.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7")
OTHER_COLOUR = "#9c9c9c"
#: How many steps up the axis may have.
TICKS = (3, 4, 5)
MAX_DAY_LABELS = 8


def chart(days: Report) -> SafeString:
    """The figure for ``days`` (a report grouped by day): the SVG and its legend."""
    bars = [row for row in days.rows if row.usage.total_tokens > 0]
    colours = _colours(bars)
    step, top = _scale(max((row.usage.total_tokens for row in bars), default=0))
    span = (days.filters.end - days.filters.start).days + 1
    slot = PLOT_WIDTH / span
    title = _("Tokens per day")
    desc = _(
        "Total tokens of each day from %(start)s to %(end)s, one bar per day with usage, "
        "stacked by model; the busiest day spent %(most)s tokens. The table below holds "
        "every figure."
    ) % {
        "start": days.filters.start.isoformat(),
        "end": days.filters.end.isoformat(),
        "most": max((row.usage.total_tokens for row in bars), default=0),
    }
    svg = format_html(
        '<svg class="usage-chart-svg" viewBox="0 0 {} {}" role="img" '
        'aria-labelledby="usage-chart-title usage-chart-desc">'
        '<title id="usage-chart-title">{}</title><desc id="usage-chart-desc">{}</desc>{}</svg>',
        WIDTH,
        HEIGHT,
        title,
        desc,
        _join(
            [
                _grid(step, top),
                _day_labels(days.filters.start, span, slot),
                *(_bar(row, days.filters.start, slot, top, colours) for row in bars),
            ]
        ),
    )
    legend = format_html_join(
        "",
        '<li><svg class="usage-swatch" viewBox="0 0 10 10" aria-hidden="true">'
        '<rect width="10" height="10" fill="{}"/></svg>{}</li>',
        ((colour, name) for name, colour in _legend(colours)),
    )
    return format_html(
        '<figure class="usage-chart">{}<figcaption><ul class="usage-legend">{}</ul>'
        "</figcaption></figure>",
        svg,
        legend,
    )


def _colours(bars: list[Row]) -> dict[str, str]:
    spent: dict[str, int] = {}
    for row in bars:
        for model, usage in row.models.items():
            spent[model] = spent.get(model, 0) + usage.total_tokens
    ranked = sorted(spent, key=lambda model: (-spent[model], model))
    return {
        model: PALETTE[n] if n < len(PALETTE) else OTHER_COLOUR for n, model in enumerate(ranked)
    }


def _legend(colours: dict[str, str]) -> list[tuple[str, str]]:
    named = [(key_text(m, "model"), c) for m, c in colours.items() if c != OTHER_COLOUR]
    if len(named) < len(colours):
        named.append((_("other models"), OTHER_COLOUR))
    return named


def _scale(most: int) -> tuple[int, int]:
    """The axis's step, a round number of tokens, and its top, the first multiple of the
    step at or above ``most``: of three to five steps, the lowest top (then fewest steps)."""
    scales = []
    for steps in TICKS:
        step = _nice_ceiling(max(most / steps, 1))
        top = max(math.ceil(most / step), 1) * step
        scales.append((top, top // step, step))
    # Fewer than three steps say little; more than five crowd the labels.
    top, _steps, step = min(scales, key=lambda scale: (scale[0], scale[1] < 3, scale[1]))
    return step, top


def _nice_ceiling(value: float) -> int:
    """The smallest whole 1, 2, 2.5 or 5 times a power of ten at least ``value`` (>= 1)."""
    power: int = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5):
        nice = factor * power
        if nice >= value and nice == int(nice):
            return int(nice)
    return 10 * power


def _y(tokens: float, top: int) -> float:
    return TOP + PLOT_HEIGHT - tokens / top * PLOT_HEIGHT


def _grid(step: int, top: int) -> SafeString:
    lines = []
    for n in range(top // step + 1):
        value = n * step
        y = round(_y(value, top), 2)
        lines.append(
            format_html(
                '<line class="usage-grid" x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<text class="usage-axis" x="{}" y="{}" text-anchor="end">{}</text>',
                LEFT,
                WIDTH - RIGHT,
                y,
                y,
                LEFT - 6,
                y + 4,
                _compact(value),
            )
        )
    return _join(lines)


def _day_labels(start: date, span: int, slot: float) -> SafeString:
    step = max(1, math.ceil(span / MAX_DAY_LABELS))
    labels = []
    for index in range(0, span, step):
        day = date.fromordinal(start.toordinal() + index)
        labels.append(
            format_html(
                '<text class="usage-axis" x="{}" y="{}" text-anchor="middle">{}</text>',
                round(LEFT + (index + 0.5) * slot, 2),
                HEIGHT - 8,
                formats.date_format(day, "M j"),
            )
        )
    return _join(labels)


def _bar(row: Row, start: date, slot: float, top: int, colours: dict[str, str]) -> SafeString:
    assert isinstance(row.key, date)
    day = row.key
    width = max(slot * 0.7, 1.0)
    x = round(LEFT + ((day - start).days + 0.15) * slot, 2)
    base = 0
    segments = []
    for model in sorted(row.models, key=lambda m: (-row.models[m].total_tokens, m)):
        tokens = row.models[model].total_tokens
        if tokens <= 0:
            continue
        y1, y0 = _y(base + tokens, top), _y(base, top)
        segments.append(
            format_html(
                '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>',
                x,
                round(y1, 2),
                round(width, 2),
                round(y0 - y1, 2),
                colours.get(model, OTHER_COLOUR),
                _("%(model)s: %(tokens)s tokens")
                % {"model": key_text(model, "model"), "tokens": tokens},
            )
        )
        base += tokens
    return format_html(
        '<g class="usage-bar" data-day="{}"><title>{}</title>{}</g>',
        day.isoformat(),
        _("%(day)s: %(tokens)s tokens") % {"day": day.isoformat(), "tokens": base},
        _join(segments),
    )


def _join(parts: list[SafeString]) -> SafeString:
    """Markup made of markup: each part was escaped when it was made."""
    return format_html_join("", "{}", ((part,) for part in parts))


def _compact(value: float) -> str:
    for size, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"
