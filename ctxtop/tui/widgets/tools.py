"""The Tools pane: calls and tokens per tool in the window at the cursor, MCP servers grouped."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ctxtop.context.sanitize import one_line
from ctxtop.tui.widgets.cells import count_cell, cut_to_cells
from ctxtop.tui.widgets.counts_table import CountsTable

# The number columns and their widths, the total first after the name: the pane is narrow.
_COUNTS = (("tokens", "tokens", 9), ("calls", "calls", 6), ("call tok", "call_tokens", 9), ("results", "results", 7),
           ("result tok", "result_tokens", 10))
NAME_WIDTH = (10, 28)  # the tool column's least and most cells


class ToolsTable(CountsTable):
    """One row per tool (the costliest first), then one per MCP server (``mcp__<server>__…``). As many count columns
    as fit whole in the pane, the costliest first; the name takes the rest."""

    NAME = ("tool", "tool", NAME_WIDTH)
    COUNTS = _COUNTS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._usage: dict[str, Any] | None = None

    def refill(self) -> None:
        if self._usage is not None:
            self.show(self._usage)

    def show(self, usage: dict[str, Any]) -> None:
        """Rebuilt at each move: a window's tools come and go with compactions."""
        self._usage = usage
        with self.app.batch_update():
            self.clear()
            for row in usage["tools"]:
                self._add(Text(cut_to_cells(one_line(row["tool"], 1000), self.name_width)), row)
            for row in usage["mcp_servers"]:
                count = f" ({row['tools']} tool{'s' if row['tools'] != 1 else ''})"
                label = Text("MCP ", style="bold") + Text(one_line(row["server"], 14)) + Text(count, style="dim")
                label.truncate(self.name_width, overflow="ellipsis")  # a DataTable crops a cell without a mark
                self._add(label, row)
            if not usage["tools"]:
                none = "no tool calls in the window" if self.name_width >= 27 else "no tool calls"
                self.add_row(Text(cut_to_cells(none, self.name_width), style="dim"), *(Text("") for _ in self.counts))

    def _add(self, label: Text, row: dict[str, Any]) -> None:
        self.add_row(label, *(count_cell(row[key], width) for _, key, width in self.counts))
