"""Tokens and calls per tool, and per MCP server: what the tool calls and their results cost.

A call counts its name and input (as the window counts it); a result counts its
text, or the placeholder the model sees once it is cleared. A result names its
tool when the log says so, else through the call it answers (by id). MCP tools
are named ``mcp__<server>__<tool>`` by Claude Code (and agents that follow it),
so their totals also add up per server.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxtop.context.window.replay import Window
from ctxtop.parsers.model import TOOL_CALL, TOOL_RESULT, Block

UNKNOWN_TOOL = "(unknown tool)"  # a result whose call is neither named in it nor in view
MCP_PREFIX = "mcp__"


@dataclass(slots=True)
class ToolTotal:
    calls: int = 0
    call_tokens: int = 0
    results: int = 0
    result_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.call_tokens + self.result_tokens

    def add(self, other: ToolTotal) -> None:
        self.calls += other.calls
        self.call_tokens += other.call_tokens
        self.results += other.results
        self.result_tokens += other.result_tokens


def mcp_server(tool: str) -> str | None:
    """``mcp__github__create_issue`` → ``github``; None for a tool that is not an MCP tool."""
    if not tool.startswith(MCP_PREFIX):
        return None
    server, separator, name = tool[len(MCP_PREFIX) :].partition("__")
    return server if separator and server and name else None


def tally(blocks: Iterable[tuple[Block, int]]) -> dict[str, ToolTotal]:
    """Per tool name, from (block, tokens) pairs in window or file order."""
    totals: dict[str, ToolTotal] = {}
    names: dict[str, str] = {}  # call id → tool name
    results: list[tuple[Block, int]] = []
    for block, tokens in blocks:
        if block.category == TOOL_CALL:
            name = block.tool_name or UNKNOWN_TOOL
            if block.tool_id:
                names[block.tool_id] = name
            total = totals.setdefault(name, ToolTotal())
            total.calls += 1
            total.call_tokens += tokens
        elif block.category == TOOL_RESULT:
            results.append((block, tokens))
    for block, tokens in results:  # after the calls: a result may come before its call's last line is merged
        total = totals.setdefault(block.tool_name or names.get(block.tool_id or "", UNKNOWN_TOOL), ToolTotal())
        total.results += 1
        total.result_tokens += tokens
    return totals


def window_tool_totals(window: Window) -> dict[str, ToolTotal]:
    return tally((item.block, item.tokens) for item in window.blocks)


def as_rows(totals: dict[str, ToolTotal]) -> dict[str, list[dict[str, Any]]]:
    """The snapshot's form: tools and MCP servers, the costliest first."""
    servers: dict[str, tuple[set[str], ToolTotal]] = {}
    for name, total in totals.items():
        server = mcp_server(name)
        if server is not None:
            server_tools, server_total = servers.setdefault(server, (set(), ToolTotal()))
            server_tools.add(name)
            server_total.add(total)

    def row(total: ToolTotal) -> dict[str, int]:
        return {"calls": total.calls, "call_tokens": total.call_tokens, "results": total.results,
                "result_tokens": total.result_tokens, "tokens": total.tokens}

    tools: list[dict[str, Any]] = [{"tool": name, "mcp_server": mcp_server(name), **row(total)} for name, total in totals.items()]
    mcp: list[dict[str, Any]] = [{"server": server, "tools": len(names), **row(total)} for server, (names, total) in servers.items()]
    tools.sort(key=lambda r: (-r["tokens"], r["tool"]))
    mcp.sort(key=lambda r: (-r["tokens"], r["server"]))
    return {"tools": tools, "mcp_servers": mcp}
