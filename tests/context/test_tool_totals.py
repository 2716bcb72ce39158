"""Calls and tokens per tool and per MCP server (issue 16, item 10)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window.session import Session
from ctxtop.context.window.tool_totals import UNKNOWN_TOOL, mcp_server
from ctxtop.tui.cli import main

from ..conftest import SHARED_FIXTURES

MAROT = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _raw_tool_calls(path) -> tuple[Counter, Counter]:
    """Tool calls and results per tool name in the main chain, read from the raw log (not ctxtop's parser)."""
    names: dict[str, str] = {}
    results: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("isSidechain") or record.get("type") not in ("user", "assistant"):
            continue
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                names[block["id"]] = block["name"]
            elif block.get("type") == "tool_result":
                results.append(block["tool_use_id"])
    return Counter(names.values()), Counter(names.get(r, UNKNOWN_TOOL) for r in results)


@pytest.mark.skipif(not MAROT.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_per_tool_totals_of_a_real_session_add_up_and_match_the_log():
    session = Session.open(MAROT)
    snapshot = build_snapshot(session, session_tools=True)
    usage, categories = snapshot["tool_usage"], snapshot["window"]["categories"]
    in_window = usage["window"]["tools"]
    # The window's tools share out exactly its tool_call and tool_result categories.
    assert sum(r["call_tokens"] for r in in_window) == categories["tool_call"]["tokens"]
    assert sum(r["result_tokens"] for r in in_window) == categories["tool_result"]["tokens"]
    assert sum(r["calls"] for r in in_window) == categories["tool_call"]["blocks"]
    # Over the session, the calls and results per tool are those the log holds.
    calls, results = _raw_tool_calls(MAROT)
    over_session = usage["session"]["tools"]
    assert {r["tool"]: r["calls"] for r in over_session if r["calls"]} == dict(calls)
    assert {r["tool"]: r["results"] for r in over_session if r["results"]} == dict(results)
    assert calls["Read"] == 42 and over_session[0]["tool"] == "Read"  # the costliest first
    assert [r["tokens"] for r in over_session] == sorted((r["tokens"] for r in over_session), reverse=True)
    assert usage["session"]["mcp_servers"] == []


def test_mcp_server_names():
    assert mcp_server("mcp__github__create_issue") == "github"
    assert mcp_server("mcp__claude_ai_Gmail__search") == "claude_ai_Gmail"
    assert mcp_server("Bash") is None
    assert mcp_server("mcp__broken") is None


def _mcp_log(tmp_path):
    calls = [("t1", "mcp__github__create_issue", "issue #12 created"), ("t2", "mcp__github__list_prs", "no open pull requests"),
             ("t3", "mcp__fs__read_file", "hello world " * 20), ("t4", "Bash", "ok")]
    lines = [{"type": "user", "sessionId": "s", "uuid": "u0", "message": {"role": "user", "content": "file the issue"}}]
    for n, (tool_id, name, output) in enumerate(calls):
        lines.append({"type": "assistant", "sessionId": "s", "uuid": f"a{n}", "message": {
            "id": f"m{n}", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": {"n": n}}],
            "usage": {"input_tokens": 100 + n, "output_tokens": 5}}})
        lines.append({"type": "user", "sessionId": "s", "uuid": f"r{n}", "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]}})
    log = tmp_path / "mcp.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def test_mcp_tools_add_up_per_server_in_json_and_markdown(tmp_path, capsys):
    log = _mcp_log(tmp_path)
    assert main(["export", str(log)]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    window = snapshot["tool_usage"]["window"]
    by_tool = {r["tool"]: r for r in window["tools"]}
    assert set(by_tool) == {"mcp__github__create_issue", "mcp__github__list_prs", "mcp__fs__read_file", "Bash"}
    assert by_tool["mcp__fs__read_file"]["mcp_server"] == "fs" and by_tool["Bash"]["mcp_server"] is None
    assert all(r["calls"] == 1 and r["results"] == 1 and r["call_tokens"] > 0 and r["result_tokens"] > 0 for r in by_tool.values())
    servers = {r["server"]: r for r in window["mcp_servers"]}
    github = servers["github"]
    assert github["tools"] == 2 and github["calls"] == 2
    for field in ("call_tokens", "result_tokens", "tokens"):
        assert github[field] == by_tool["mcp__github__create_issue"][field] + by_tool["mcp__github__list_prs"][field]
    assert snapshot["tool_usage"]["session"] == window  # nothing compacted away
    markdown = render_markdown(snapshot)
    assert "### Tools (in the window)" in markdown and "MCP servers (in the window):" in markdown
    assert f"| github | 2 | 2 | {github['call_tokens']:,} |" in markdown


async def test_the_tools_pane_shows_each_tool_and_each_mcp_server(tmp_path):
    from textual.widgets import DataTable, TabbedContent

    from ctxtop.tui.app import CtxtopApp

    from ..tui.test_app import SIZE, settle

    log = _mcp_log(tmp_path)
    expected = build_snapshot(Session.open(log))["tool_usage"]["window"]
    app = CtxtopApp(str(log))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 9)
        app.query_one(TabbedContent).active = "tab-tools"
        await pilot.pause()
        table = app.query_one("#tools", DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        keys = [column.key.value for column in table.columns.values()][1:]  # the counts the pane has room for, whole
    servers = {"github": "MCP github (2 tools)", "fs": "MCP fs (1 tool)"}
    assert [r[0] for r in rows] == [r["tool"] for r in expected["tools"]] + [servers[r["server"]] for r in expected["mcp_servers"]]
    assert keys[:2] == ["tokens", "calls"]
    for shown, server in zip(rows[-2:], expected["mcp_servers"]):
        assert shown[1:] == [f"{server[k]:,}" for k in keys]
