"""The blocks in the window at the cursor, one line each, virtualized with the Line API.

Only the lines on screen are rendered, each from a small row record, so ten
thousand blocks scroll as smoothly as ten. The selected strategy's fate of each
block (dropped, placeholder, summarized, truncated) and pinned constraints are
drawn on the line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ctxtop.context.output.redact import redact_text
from ctxtop.context.sanitize import cut, one_line
from ctxtop.context.window.replay import Window
from ctxtop.parsers.model import TOOL_CALL, TOOL_RESULT
from ctxtop.tui.theme import CATEGORY_COLORS, FATE_STYLES

PREVIEW_CHARS = 400  # enough for the widest terminal; the rest is never shown on one line


@dataclass(slots=True, frozen=True)
class Row:
    message: int
    category: str
    tokens: int
    estimated: bool
    label: str  # role, or the tool's name
    preview: str  # one clean line
    pinned: bool  # a pinned constraint occurs in this block


def rows_of(window: Window, marked_blocks: set[int]) -> list[Row]:
    """One row per block of ``window``. Reads every block's text (a released one from the log): call it in a worker."""
    # A tool result is labelled with the tool that produced it, found through its call.
    tool_names = {item.block.tool_id: item.block.tool_name for item in window.blocks if item.category == TOOL_CALL}
    rows = []
    for i, item in enumerate(window.blocks):
        block = item.block
        if item.category == TOOL_RESULT:
            label = "↳ " + (block.tool_name or tool_names.get(block.tool_id) or "result")
        else:
            label = block.tool_name or item.category  # what the block is (summary, reasoning…), not who sent it
        # (A block of megabytes is not folded whole for one line; cut, not sliced: a slice left as the line's end
        # where folding made it short may end inside an address, which redaction cannot tell from a word.)
        preview = one_line(cut(item.text, PREVIEW_CHARS * 2), PREVIEW_CHARS)
        rows.append(Row(item.entry.index, item.category, item.tokens, item.estimated, one_line(label, 14), preview, i in marked_blocks))
    return rows


def redacted(rows: list[Row]) -> list[Row]:
    """The rows with secrets and personal data masked in their previews (cheap: previews are one line)."""
    return [replace(row, preview=redact_text(row.preview)) for row in rows]


class WindowList(ScrollView, can_focus=True):
    """One line per block; ↑/↓ select, the selection shows in the detail pane."""

    COMPONENT_CLASSES = {"window-list--cursor", "window-list--pin"}
    DEFAULT_CSS = """
    WindowList { background: $surface; }
    WindowList > .window-list--cursor { background: $accent 35%; }
    WindowList:focus > .window-list--cursor { background: $accent 60%; }
    WindowList > .window-list--pin { color: $warning; text-style: bold; }
    """
    BINDINGS = [
        Binding("up", "select(-1)", "Up", show=False),
        Binding("down", "select(1)", "Down", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
    ]

    class Selected(Message):
        """The selected block changed."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[Row] = []
        self.fates: list[str] | None = None
        self.selected = 0
        self._reveal_pending = False  # the selection must be scrolled into view once the list is laid out
        self._lines: LRUCache[tuple, Strip] = LRUCache(1024)

    def set_rows(self, rows: list[Row], *, keep_selection: bool = True) -> None:
        self.rows = rows
        self.fates = None
        self.selected = min(self.selected, max(0, len(rows) - 1)) if keep_selection else max(0, len(rows) - 1)
        self._lines.clear()
        self.virtual_size = Size(0, len(rows))  # (rows are cut to the width there is: never a horizontal scroll)
        self.refresh()
        self._reveal_pending = True
        self._reveal()
        self.post_message(self.Selected(self.selected))

    def set_fates(self, fates: list[str] | None) -> None:
        """Mark blocks with a strategy's fates (None: no strategy selected)."""
        self.fates = fates if fates is not None and len(fates) == len(self.rows) else None
        self._lines.clear()
        self.refresh()

    def select(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(len(self.rows) - 1, index))
        if index != self.selected:
            self.selected = index
            self._lines.clear()
            self.refresh()
            self.post_message(self.Selected(index))
        self._reveal()

    def action_select(self, step: int) -> None:
        self.select(self.selected + step)

    def action_page(self, step: int) -> None:
        self.select(self.selected + step * max(1, self.size.height - 1))

    def _reveal(self) -> None:
        """Scroll the selection into view; until the list is laid out at its new size, try again after each paint."""
        height = self.scrollable_content_region.height
        if height <= 0 or self.virtual_size.height != len(self.rows):
            return
        self.scroll_to_region(Region(0, self.selected, 1, 1), animate=False, immediate=True)
        top = int(self.scroll_offset.y)
        if top <= self.selected < top + height:
            self._reveal_pending = False

    def on_click(self, event: events.Click) -> None:
        self.select(int(self.scroll_offset.y) + event.y)

    def on_resize(self) -> None:
        self._lines.clear()
        self.virtual_size = Size(0, len(self.rows))
        self._reveal_pending = True
        self.call_after_refresh(self._reveal)

    def render_line(self, y: int) -> Strip:
        if y == 0 and self._reveal_pending:
            self.call_after_refresh(self._reveal)
        index = int(self.scroll_offset.y) + y
        width = self.scrollable_content_region.width  # (the scrollbar's columns are not the row's: its "…" would fall under them)
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        fate = self.fates[index] if self.fates else "kept"
        key = (index, width, fate, index == self.selected, self.has_focus)
        cached = self._lines.get(key)
        if cached is None:
            cached = self._render_row(index, fate, width)
            self._lines[key] = cached
        return cached

    def _render_row(self, index: int, fate: str, width: int) -> Strip:
        row = self.rows[index]
        icon, fate_style = FATE_STYLES.get(fate, ("", ""))
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("▌", style=CATEGORY_COLORS.get(row.category, ""))
        text.append(f"{row.message:>5} ", style="dim")
        text.append(f"{'≈' if row.estimated else ' '}{row.tokens:>7,} ", style="bold" if row.tokens >= 1000 else "")
        text.append(f"{row.label:<14} ", style=CATEGORY_COLORS.get(row.category, ""))
        text.append(f"{icon or ' '} ", style=fate_style)
        if row.pinned:
            text.append("◆ ", style=self.get_component_rich_style("window-list--pin"))
        # Log text is appended as plain text: never parsed as markup.
        text.append(row.preview, style=fate_style)
        text.truncate(width, overflow="ellipsis", pad=True)
        base = self.rich_style
        if index == self.selected:
            base = base + self.get_component_rich_style("window-list--cursor")
        segments = [Segment(s.text, base + s.style if s.style else base) for s in text.render(self.app.console)]
        return Strip(segments, width).crop_extend(0, width, base if isinstance(base, Style) else None)
