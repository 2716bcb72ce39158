"""The /context-like breakdown: a stacked bar across the width and a table of categories."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from ctxtop.context.output.snapshot import BREAKDOWN_ROWS, INFERRED
from ctxtop.tui.theme import CATEGORY_COLORS, FREE_COLOR
from ctxtop.tui.widgets.cells import count_cell, percent_text

# Row names on screen, where the snapshot's key is not one; ≈ marks an estimate, not a count.
ROW_NAMES = {INFERRED: "inferred sys+tools"}
# In a summarization call's own log (a compaction sub-agent's), the inferred part is mostly the conversation it was
# sent to summarize, not logged there: "system and tools" alone would misname 80% of its window.
SUMMARIZED_ROW_NAME = "summarized conv.+sys"
# Where the inferred row's figure comes from, by the reason the harness module gives.
INFERRED_FROM = {"first call": "the first call", "model switch": "a model switch"}
_TOKENS_WIDTH = 12
_BLOCKS_WIDTH = 7


def stacked_bar(categories: dict[str, dict[str, int]], limit: int, width: int) -> Text:
    """One row of blocks, each category's share of the window in its colour, the rest free."""
    bar = Text()
    used_cells = 0
    for name in BREAKDOWN_ROWS:
        tokens = categories[name]["tokens"]
        cells = round(width * tokens / limit) if limit else 0
        cells = min(cells, width - used_cells)
        if cells:
            bar.append("█" * cells, style=CATEGORY_COLORS[name])
            used_cells += cells
    if used_cells < width:
        bar.append("░" * (width - used_cells), style=FREE_COLOR)
    return bar


def inference_note(categories: dict[str, dict[str, Any]]) -> Text:
    """Where the inferred row comes from, in one line (≈ rows are estimates, not counts)."""
    source = categories[INFERRED].get("inferred_from")
    if source is None or not categories[INFERRED]["tokens"]:
        return Text("")
    where = INFERRED_FROM.get(source["reason"], "the first call after a compaction")
    # A summarization call's log: what it summarized was sent with the call, not logged.
    held = ", with the conversation summarized" if categories[INFERRED].get("summarized_conversation") else ""
    return Text(f"≈ estimates · inferred from {where} (message {source['message']}){held}", no_wrap=True, overflow="ellipsis")


class Breakdown(Vertical):
    """Bar and per-category table; rows are keyed by category and updated in place."""

    DEFAULT_CSS = """
    Breakdown { height: auto; }
    Breakdown > #bar { height: 1; margin: 0 1; }
    Breakdown > DataTable { height: auto; }
    Breakdown > #note { height: 1; margin: 0 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._snapshot: dict[str, Any] | None = None
        self._crowded = False  # the rows do not all fit: the biggest first
        self._row_named: dict[str, str] = {}  # each row's name as shown → its category (the table sorts by cell text)

    def compose(self) -> ComposeResult:
        yield Static(id="bar")
        table: DataTable = DataTable(cursor_type="none", zebra_stripes=False, id="categories")
        # Fixed widths: rows come and go with the cursor, and the columns must not jump; tokens
        # holds "≈999,999,999" whole, and cells.fitted_count rounds what is wider rather than cut it.
        table.add_column("category", key="category", width=22)
        table.add_column(Text("tokens", justify="right"), key="tokens", width=_TOKENS_WIDTH)
        table.add_column(Text("% window", justify="right"), key="share", width=8)
        table.add_column(Text("blocks", justify="right"), key="blocks", width=_BLOCKS_WIDTH)
        yield table
        yield Static(id="note")

    @property
    def has_snapshot(self) -> bool:
        return self._snapshot is not None

    def show(self, snapshot: dict[str, Any]) -> None:
        """Update the rows in place; a category gets its row the first time it holds tokens or blocks (a summary
        of 0 tokens is still a block of the window: the blocks column must add up to the window's)."""
        self._snapshot = snapshot
        window = snapshot["window"]
        limit = window["limit"]
        table = self.query_one(DataTable)
        added = False
        for name, total in window["categories"].items():
            label = SUMMARIZED_ROW_NAME if total.get("summarized_conversation") else ROW_NAMES.get(name, name)
            if name not in table.rows:
                if not total["tokens"] and not total["blocks"]:
                    continue
                table.add_row(Text(""), Text(""), Text(""), Text(""), key=name)
                added = True
            table.update_cell(name, "category", Text("■ ", style=CATEGORY_COLORS[name]) + Text(label))
            self._row_named[label] = name
            estimate = "≈" if total.get("estimated") else ""  # not a count: what the log reports beyond the counted text
            table.update_cell(name, "tokens", count_cell(total["tokens"], _TOKENS_WIDTH, mark=estimate))
            table.update_cell(name, "share", Text(percent_text(100 * total["tokens"] / limit), justify="right"))
            table.update_cell(name, "blocks", count_cell(total["blocks"], _BLOCKS_WIDTH))
        self.query_one("#note", Static).update(inference_note(window["categories"]))
        self._order(force=added or self._crowded)  # (crowded: the biggest at this message, not at the first one shown)
        self._draw_bar()

    def _order(self, force: bool = False) -> None:
        """The rows in the breakdown's order; the biggest first when they do not all fit (a short
        terminal), so that what fills the window is never the part scrolled out of sight."""
        table = self.query_one(DataTable)
        if self._snapshot is None or not table.row_count:
            return
        crowded = 0 < table.size.height <= table.row_count  # (the header takes a row)
        if not force and crowded == self._crowded:
            return
        self._crowded = crowded
        names = self._row_named
        if crowded:
            tokens = {name: row["tokens"] for name, row in self._snapshot["window"]["categories"].items()}
            table.sort("category", key=lambda cell: -tokens[names[cell.plain[2:]]])
        else:
            order = {name: i for i, name in enumerate(BREAKDOWN_ROWS)}
            table.sort("category", key=lambda cell: order[names[cell.plain[2:]]])

    def on_resize(self) -> None:
        self._order()
        self._draw_bar()

    def _draw_bar(self) -> None:
        if self._snapshot is None:
            return
        bar = self.query_one("#bar", Static)
        window = self._snapshot["window"]
        bar.update(stacked_bar(window["categories"], window["limit"], max(10, bar.size.width or self.size.width - 2)))
