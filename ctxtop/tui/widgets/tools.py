"""The Tools pane: calls and tokens per tool in the window at the cursor, MCP servers grouped."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from ctxtop.context.sanitize import one_line
from ctxtop.tui.widgets.cells import count_cell

# The number columns and their widths, the total first after the name: the pane is narrow.
_COUNTS = (("tokens", "tokens", 9), ("calls", "calls", 6), ("call tok", "call_tokens", 9), ("results", "results", 7),
           ("result tok", "result_tokens", 10))


class ToolsTable(DataTable):
    """One row per tool (the costliest first), then one per MCP server (``mcp__<server>__…``)."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_column("tool", key="tool", width=28)
        for label, key, width in _COUNTS:
            self.add_column(Text(label, justify="right"), key=key, width=width)

    def show(self, usage: dict[str, Any]) -> None:
        """Rebuilt at each move: a window's tools come and go with compactions."""
        with self.app.batch_update():
            self.clear()
            for row in usage["tools"]:
                self._add(Text(one_line(row["tool"], 28)), row)
            for row in usage["mcp_servers"]:
                count = f" ({row['tools']} tool{'s' if row['tools'] != 1 else ''})"
                label = Text("MCP ", style="bold") + Text(one_line(row["server"], 14)) + Text(count, style="dim")
                self._add(label, row)
            if not usage["tools"]:
                self.add_row(Text("no tool calls in the window", style="dim"), *(Text("") for _ in _COUNTS))

    def _add(self, label: Text, row: dict[str, Any]) -> None:
        self.add_row(label, *(count_cell(row[key], width) for _, key, width in _COUNTS))
