"""The Tools pane: calls and tokens per tool in the window at the cursor, MCP servers grouped."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from ctxtop.context.output.sanitize import one_line


def _num(value: int) -> Text:
    return Text(f"{value:,}", justify="right")


class ToolsTable(DataTable):
    """One row per tool (the costliest first), then one per MCP server (``mcp__<server>__…``)."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        # The total first after the name: the pane is narrow.
        self.add_column("tool", key="tool", width=28)
        self.add_column(Text("tokens", justify="right"), key="tokens", width=9)
        self.add_column(Text("calls", justify="right"), key="calls", width=6)
        self.add_column(Text("call tok", justify="right"), key="call_tokens", width=9)
        self.add_column(Text("results", justify="right"), key="results", width=7)
        self.add_column(Text("result tok", justify="right"), key="result_tokens", width=10)

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
                self.add_row(Text("no tool calls in the window", style="dim"), *(Text("") for _ in range(5)))

    def _add(self, label: Text, row: dict[str, Any]) -> None:
        self.add_row(label, _num(row["tokens"]), _num(row["calls"]), _num(row["call_tokens"]), _num(row["results"]),
                     _num(row["result_tokens"]))
