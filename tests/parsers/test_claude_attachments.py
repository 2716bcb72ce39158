"""Claude Code attachments without ``rendered`` and ``prompt_snapshot`` (issue 16, items 5 and 6).

The fixtures are hand-written in the shapes 2.1.8x–2.1.11x and 2.1.2xx write
(see tests/data/README.md).
"""

from __future__ import annotations

import json

from ctxtop.context.window.session import Session
from ctxtop.parsers.claude_attachments import read_attachment
from ctxtop.parsers.model import SYSTEM_SNAPSHOT
from ctxtop.tui.cli import main

from ..conftest import DATA

ATTACHMENTS = DATA / "claude_attachments_2_1_92.jsonl"
SNAPSHOTS = DATA / "claude_prompt_snapshot.jsonl"


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_kind_gives_the_text_the_model_sees():
    read = {r["attachment"]["type"] + ("" if i != 14 else ":post"): read_attachment(r) for i, r in enumerate(_records(ATTACHMENTS))
            if r["type"] == "attachment"}
    texts = {kind: [(b.category, b.text) for b in reading.blocks] for kind, reading in read.items()}
    assert texts["hook_success"] == [("injected", "This repository deploys from main: never push to main, open a pull request.")]
    assert texts["hook_additional_context"] == [("injected", "SessionStart hook additional context: Budget cap: 8000 per order; above it, stop and ask.")]
    assert texts["nested_memory"] == [("injected", "# Shop\nRun `make test` before every commit.\nNever commit .env files.\n")]
    assert texts["skill_listing"] == [("tools", "- pdf: Extract text and tables from PDF files\n- xlsx: Read and write spreadsheets")]
    assert texts["deferred_tools_delta"] == [("tools", "mcp__github__create_issue\nmcp__github__list_pulls")]
    assert texts["mcp_instructions_delta"] == [("injected", "## github\nUse the GitHub tools for issues and pull requests; never force-push.")]
    assert texts["agent_listing_delta"] == [("tools", "- Explore: Fast agent for exploring codebases (Tools: Glob, Grep, Read)")]
    assert texts["file"] == [("injected", "def test_total():\n    assert total([Item(2), Item(3)]) == 5\n")]
    assert texts["queued_command"] == [("user", "also add a test for an empty order")]
    assert "Fix the order total" in texts["todo_reminder"][0][1]
    # A PostToolUse hook's stdout is shown to the user only; plan mode's reminder is Claude Code's template.
    assert texts["hook_success:post"] == [] and read["hook_success:post"].known
    assert texts["plan_mode"] == [] and read["plan_mode"].known
    assert not read["teammate_mailbox"].known


def test_the_session_counts_them_and_names_the_unknown_kinds(capsys):
    assert main(["export", str(ATTACHMENTS)]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    categories = snapshot["window"]["categories"]
    assert (categories["injected"]["blocks"], categories["tools"]["blocks"], categories["user"]["blocks"]) == (6, 3, 2)
    diagnostics = snapshot["source"]["diagnostics"]
    assert diagnostics["unknown_kinds"] == {"attachment:teammate_mailbox": 2}
    assert diagnostics["skipped_records"] == 2  # plan_mode, the PostToolUse hook
    assert snapshot["window"]["reported_tokens"] == 4 + 9120 + 980


def test_unknown_kinds_are_named_in_markdown(capsys):
    assert main(["export", "--format", "md", str(ATTACHMENTS)]) == 0
    assert "attachment:teammate_mailbox ×2" in capsys.readouterr().out


def test_a_prompt_snapshot_counts_as_system_and_tools():
    session = Session.open(SNAPSHOTS)
    snapshots = [e.index for e in session.entries if e.role == SYSTEM_SNAPSHOT]
    assert snapshots == [1, 6, 12]  # the identical repeat at line 5 is skipped
    first = session.window_at(1).categories()
    assert (first["system"].blocks, first["tools"].blocks) == (3, 2)  # cliPrefix + 2 system prompt parts; Bash, Read
    assert first["system"].tokens > 30 and first["tools"].tokens > 60


def _layout(window):
    return [(item.entry.index, item.category, item.block.tool_name) for item in window.blocks]


def test_a_changed_snapshot_replaces_the_one_before_at_the_front_of_the_window():
    session = Session.open(SNAPSHOTS)
    window = session.window_at(8)
    assert _layout(window)[:6] == [(6, "system", None)] * 3 + [(6, "tools", "Bash"), (6, "tools", "Read"),
                                                              (6, "tools", "mcp__github__create_issue")]
    categories = window.categories()
    # not 6 and 5: the first snapshot is gone; the skill listing (a user message) adds one tools block
    assert (categories["system"].blocks, categories["tools"].blocks) == (3, 4)
    assert window.estimated_tokens == sum(b.tokens for b in window.blocks)


def test_after_a_compaction_a_snapshot_without_tools_keeps_the_tools_and_listings_come_again():
    session = Session.open(SNAPSHOTS)
    window = session.window_at()
    # The post-compaction snapshot (entry 12) carries the system prompt only: the tools of entry 6 are still sent.
    assert _layout(window)[:6] == [(12, "system", None)] * 3 + [(6, "tools", "Bash"), (6, "tools", "Read"),
                                                               (6, "tools", "mcp__github__create_issue")]
    # The skill listing injected before the compaction left with it; the one injected after is there, once.
    listings = [index for index, category, tool in _layout(window) if category == "tools" and tool is None]
    assert listings == [13]
    assert window.estimated_tokens == sum(b.tokens for b in window.blocks)


def test_a_hook_context_written_twice_is_counted_once_and_a_hook_firing_again_twice(tmp_path):
    records = _records(ATTACHMENTS)
    success, assistant = records[0], records[-1]  # the SessionStart hook's JSON stdout, a model call
    context = json.loads(success["attachment"]["stdout"])["hookSpecificOutput"]["additionalContext"]
    echo = {**records[1], "attachment": {**records[1]["attachment"], "toolUseID": success["attachment"]["toolUseID"], "content": [context]}}
    prompt = {"type": "user", "sessionId": success["sessionId"], "uuid": "p", "message": {"role": "user", "content": "next"}}
    # The same context as a hook_success and a hook_additional_context; later the hook fires again.
    lines = [success, echo, prompt, assistant, prompt, success, assistant]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    session = Session.open(log)
    injected = [b.text for e in session.entries for b in e.blocks if b.category == "injected"]
    assert injected == [context, context]
