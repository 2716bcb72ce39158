"""Window tokens per message, stacked by category, with compaction markers, ctxtop's own hooks acting (✚) and the cursor."""

from __future__ import annotations

from bisect import bisect_right

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

from ctxtop.context.window.timeline import ROWS, TimelinePoint, TimelineView
from ctxtop.tui.theme import CATEGORY_COLORS, COMPACTION_COLOR, CURSOR_STYLE

EIGHTHS = " ▁▂▃▄▅▆▇█"
GUTTER = 7  # the y-axis: a scale label and its tick
LIMIT_STYLE = "red"
GUARD_MARK, GUARD_STYLE = "✚", "bold green"  # a re-injection or a denied call by ctxtop's hooks


def short_tokens(tokens: float) -> str:
    """8000 → 8.0k, 1048576 → 1.0M: a scale label in five characters (or six, past 100 of a unit)."""
    for scale, unit in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "B"), (1e6, "M")):
        if tokens >= scale * 0.9995:
            return f"{tokens / scale:.1f}{unit}" if tokens < 99.95 * scale else f"{tokens / scale:.0f}{unit}"
    if tokens >= 1000:
        return f"{tokens / 1e3:.1f}k" if tokens < 99_950 else f"{tokens / 1e3:.0f}k"
    return f"{tokens:.0f}"


def bucket(count: int, width: int) -> list[tuple[int, int]]:
    """Split messages [0, count) into at most ``width`` contiguous column ranges."""
    columns = min(count, width)
    return [(count * c // columns, count * (c + 1) // columns) for c in range(columns)] if columns else []


def column_stack(point: TimelinePoint, scale: float, height: int) -> list[str | None]:
    """The category colour of each of ``height`` cells (bottom first) for one column.

    Each cell takes the colour of the category that fills most of it; the top
    cell may be partial, drawn with an eighth-block character by the caller.
    """
    cells: list[str | None] = []
    bounds = []
    level = 0.0
    for name, tokens in zip(ROWS, point.tokens):
        if tokens:
            bounds.append((level, level + tokens * scale, name))
            level += tokens * scale
    for row in range(height):
        low, high = row, row + 1
        best, best_share = None, 0.0
        for start, end, name in bounds:
            share = max(0.0, min(end, high) - max(start, low))
            if share > best_share:
                best, best_share = name, share
        cells.append(best)
    return cells


class Timeline(Widget):
    """A stacked chart across the width; click a column to move there."""

    DEFAULT_CSS = """
    Timeline { height: 7; }
    """

    class Picked(Message):
        """The user clicked the chart at ``message``."""

        def __init__(self, message: int) -> None:
            super().__init__()
            self.message = message

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.points: TimelineView | None = None
        self.available = 0  # messages that have "arrived" (live tailing, demo replay)
        self.limit = 1
        self.cursor = 0
        self.guard_marks: list[int] = []  # messages where ctxtop's hooks acted, in order
        self.estimated = False  # the points include counts estimated from characters

    def set_guard_marks(self, messages: list[int]) -> None:
        marks = sorted(set(messages))
        if marks != self.guard_marks:
            self.guard_marks = marks
            self.refresh()

    def _guarded(self, start: int, end: int) -> bool:
        """Whether ctxtop's hooks acted at a message in (start, end] (a column, as the cursor's test)."""
        found = bisect_right(self.guard_marks, start)
        return found < len(self.guard_marks) and self.guard_marks[found] <= end

    def set_data(self, points: TimelineView, limit: int, estimated: bool = False) -> None:
        """``estimated``: the points include counts estimated from characters (marked ≈ on the scale)."""
        self.points, self.limit, self.estimated = points, max(1, limit), estimated
        self.refresh()

    def set_position(self, available: int, cursor: int) -> None:
        if (available, cursor) != (self.available, self.cursor):
            self.available, self.cursor = available, cursor
            self.refresh()

    def _columns(self) -> list[tuple[int, int]]:
        return bucket(min(self.available, len(self.points or ())), max(1, self.size.width - 1 - GUTTER))

    def render(self) -> Text:
        height = max(1, self.size.height - 1)  # the last row holds markers
        columns, points = self._columns(), self.points
        if not columns or points is None:
            return Text("no messages yet", style="dim")
        # The tallest message of each column stands for it, so no peak is hidden (found with one
        # scan of the column's totals: a big session has far more messages than the chart columns).
        tallest = [points[points.tallest(start, end)] for start, end in columns]
        peak = max(point.total for point in tallest)
        ceiling = max(self.limit, peak, 1)
        scale = height / ceiling
        # The y-axis: the top of the scale, the window limit (a dashed line across the chart) and 0.
        limit_row = min(height - 1, int(self.limit * scale)) if self.limit <= ceiling else None
        rows = []
        for row in range(height - 1, -1, -1):  # top first
            if row == height - 1:
                scale_top = f"≈{short_tokens(ceiling):>4}" if self.estimated else f"{short_tokens(ceiling):>5}"
                rows.append(Text(f"{scale_top} ┤", style=LIMIT_STYLE if row == limit_row else "dim"))
            elif row == limit_row:
                rows.append(Text(f"{short_tokens(self.limit):>5} ┤", style=LIMIT_STYLE))
            elif row == 0:
                rows.append(Text(f"{'0':>5} ┤", style="dim"))
            else:
                rows.append(Text(f"{'':>5} │", style="dim"))
        markers = Text(f"{'':>5} └", style="dim")
        for (start, end), point in zip(columns, tallest):
            stack = column_stack(point, scale, height)
            top = point.total * scale
            for row in range(height):
                cell = stack[row]
                if cell is None:
                    rows[height - 1 - row].append("╌" if row == limit_row else " ", style=LIMIT_STYLE)
                    continue
                fill = min(1.0, top - row)
                char = "█" if fill >= 1 else EIGHTHS[max(1, round(fill * 8))]
                rows[height - 1 - row].append(char, style=CATEGORY_COLORS[cell])
            here = start < self.cursor <= end
            compacted = points.compaction_in(start, end)
            if here:  # (its compaction's ▲ in the cursor's colour: the cursor must not hide a compaction)
                markers.append("▲" if compacted else "●", style=CURSOR_STYLE)
            elif self.guard_marks and self._guarded(start, end):
                markers.append(GUARD_MARK, style=GUARD_STYLE)  # (a re-injection follows the ▲ it answers)
            elif compacted:
                markers.append("▲", style=COMPACTION_COLOR)
            else:
                markers.append("─", style="dim")
        self._label_cursor(markers, columns)
        chart = Text("\n").join(rows)
        chart.append("\n")
        chart.append_text(markers)
        return chart

    def _label_cursor(self, markers: Text, columns: list[tuple[int, int]]) -> None:
        """Write the cursor's message number on the marker row, beside the ● (after it, or before at the right end)."""
        at = next((i for i, (start, end) in enumerate(columns) if start < self.cursor <= end), None)
        if at is None:
            return
        label = f" {self.cursor} "
        plain = markers.plain
        # After the ●, or before it; never over a compaction's ▲ (the header says the number anyway).
        sides = [GUTTER + at + 1] if at + 1 + len(label) <= len(columns) else []
        sides.append(GUTTER + at - len(label))
        begin = next((b for b in sides if b >= GUTTER and "▲" not in plain[b : b + len(label)]), None)
        if begin is not None:
            markers.stylize("bold", begin, begin + len(label))
            plain = markers.plain
            styled = Text(plain[:begin] + label + plain[begin + len(label):])
            for span in markers.spans:
                styled.stylize(span.style, span.start, span.end)
            markers.truncate(0)
            markers.append_text(styled)

    def on_click(self, event: events.Click) -> None:
        """The column's last message; its compaction, when it holds one (its ▲: the app opens the compaction)."""
        columns = self._columns()
        offset = event.get_content_offset(self)  # (inside the padding: the chart starts there, not at the border)
        if offset is None or not columns or self.points is None or not 0 <= offset.x - GUTTER < len(columns):
            return
        start, end = columns[offset.x - GUTTER]
        compaction = self.points.first_compaction_in(start, end)
        self.post_message(self.Picked(end if compaction is None else compaction + 1))

