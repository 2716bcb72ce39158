"""The Tools pane: calls and tokens per tool in the window at the cursor, MCP servers grouped."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from ctxtop.context.sanitize import one_line
from ctxtop.tui.widgets.cells import count_cell, counts_that_fit

# The number columns and their widths, the total first after the name: the pane is narrow.
_COUNTS = (("tokens", "tokens", 9), ("calls", "calls", 6), ("call tok", "call_tokens", 9), ("results", "results", 7),
           ("result tok", "result_tokens", 10))
NAME_WIDTH = (10, 28)  # the tool column's least and most cells


class ToolsTable(DataTable):
    """One row per tool (the costliest first), then one per MCP server (``mcp__<server>__…``). As many count columns
    as fit whole in the pane, the costliest first; the name takes the rest."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self._name_width, self._counts = NAME_WIDTH[1], list(_COUNTS)
        self._usage: dict[str, Any] | None = None
        self._add_columns()

    def _add_columns(self) -> None:
        self.add_column("tool", key="tool", width=self._name_width)
        for label, key, width in self._counts:
            self.add_column(Text(label, justify="right"), key=key, width=width)

    def on_resize(self) -> None:
        name_width, shown = counts_that_fit(self.size.width, [(key, width) for _, key, width in _COUNTS], NAME_WIDTH)
        counts = [count for count in _COUNTS if (count[1], count[2]) in shown]
        if (name_width, counts) != (self._name_width, self._counts):
            self._name_width, self._counts = name_width, counts
            self.clear(columns=True)
            self._add_columns()
            if self._usage is not None:
                self.show(self._usage)

    def show(self, usage: dict[str, Any]) -> None:
        """Rebuilt at each move: a window's tools come and go with compactions."""
        self._usage = usage
        with self.app.batch_update():
            self.clear()
            for row in usage["tools"]:
                self._add(Text(one_line(row["tool"], self._name_width)), row)
            for row in usage["mcp_servers"]:
                count = f" ({row['tools']} tool{'s' if row['tools'] != 1 else ''})"
                label = Text("MCP ", style="bold") + Text(one_line(row["server"], 14)) + Text(count, style="dim")
                self._add(label, row)
            if not usage["tools"]:
                self.add_row(Text("no tool calls in the window", style="dim"), *(Text("") for _ in self._counts))

    def _add(self, label: Text, row: dict[str, Any]) -> None:
        self.add_row(label, *(count_cell(row[key], width) for _, key, width in self._counts))
