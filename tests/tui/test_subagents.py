"""Sub-agents with a window of their own: listed, exported, opened in the TUI and back (issue 16, item 2)."""

from __future__ import annotations

import json
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import DataTable, TabbedContent

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.sanitize import cut
from ctxtop.context.store.source import SourceError
from ctxtop.context.window.session import Session
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.cli import main
from ctxtop.tui.messages import LogChanged
from ctxtop.tui.widgets.header import header_text

from ..conftest import SHARED_FIXTURES
from .test_app import SIZE, settle, until

SESSION = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
AGENTS = SESSION.with_suffix("") / "subagents"
pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")


def _own_conversation() -> bool:
    """Whether a sidechain-only transcript parses as its own conversation (issue 16 item 1, another branch)."""
    return SESSION.is_file() and Session.open(AGENTS / "agent-a881341.jsonl").message_count > 0


def _last_prompt(path) -> int:
    """The last model call's prompt in a transcript, read from the raw records."""
    prompt = None
    for line in path.read_text(encoding="utf-8").splitlines():
        usage = (json.loads(line).get("message") or {}).get("usage")
        if usage:
            prompt = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    return prompt


def test_the_sub_agents_are_listed_with_their_type_task_and_totals():
    agents = build_snapshot(Session.open(SESSION))["subagents"]["agents"]
    by_id = {a["id"]: a for a in agents}
    assert set(by_id) == {"a881341", "acompact-fffbd0"}
    task = by_id["a881341"]
    # Named by the Task call that started it (its input's subagent_type and description).
    assert (task["kind"], task["description"]) == ("claude-code-guide", "Research Claude hook output")
    assert by_id["acompact-fffbd0"]["kind"] == "compaction"
    # Each file's records: 6 and 4 messages (user/assistant records, one response merged by message id).
    assert (task["messages"], by_id["acompact-fffbd0"]["messages"]) == (6, 4)
    assert all(a["window"]["limit"] == 200_000 for a in agents)
    # The header sums their counted text: our count (est.), as the window's own is, not their windows.
    snapshot = build_snapshot(Session.open(SESSION))
    assert "sub-agents 10 msgs est. 32,777 tok" in header_text(snapshot, available=snapshot["at"]["messages"], mode="").plain


@pytest.mark.skipif(not _own_conversation(), reason="a sub-agent file does not parse as its own conversation yet (issue 16 item 1)")
def test_each_sub_agent_window_is_its_last_reported_prompt():
    agents = {a["id"]: a for a in build_snapshot(Session.open(SESSION))["subagents"]["agents"]}
    for agent_id, expected in (("a881341", 42_182), ("acompact-fffbd0", 169_248)):
        window = agents[agent_id]["window"]
        assert window["reported_tokens"] == expected == _last_prompt(AGENTS / f"agent-{agent_id}.jsonl")
        assert window["percent"] == round(100 * expected / 200_000, 1)


def test_export_subagent_gives_that_transcript_and_a_wrong_id_is_one_line(capsys):
    assert main(["export", str(SESSION), "--subagent", "agent-a881341"]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert Path(snapshot["source"]["path"]).resolve() == (AGENTS / "agent-a881341.jsonl").resolve()
    assert snapshot["subagents"]["agents"] == []  # a sub-agent's siblings are not its own
    if _own_conversation():
        assert snapshot["window"]["reported_tokens"] == 42_182 and snapshot["source"]["messages"] == 6
    assert main(["export", str(SESSION), "--subagent", "nope"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "no sub-agent 'nope' (sub-agents: a881341, acompact-fffbd0)" in error
    # An empty id (a script's unset variable) exported the main session instead, exit 0, as if it were the sub-agent.
    assert main(["export", str(SESSION), "--subagent", ""]) == 2
    out, error = capsys.readouterr()
    assert out == "" and error.count("\n") == 1 and "no sub-agent '' (sub-agents: a881341, acompact-fffbd0)" in error


def test_export_subagent_of_a_folder_never_writes_into_the_sessions_own_folder(tmp_path, capsys):
    # Given the log, `-o <session>/notes.json` was refused; given its folder, the same file was written beside it.
    shutil.copy(SESSION, tmp_path / SESSION.name)
    shutil.copytree(SESSION.with_suffix(""), tmp_path / SESSION.stem)
    kept_beside = tmp_path / SESSION.stem / "notes.json"
    for given in (tmp_path / SESSION.name, tmp_path):
        assert main(["export", str(given), "--subagent", "a881341", "-o", str(kept_beside)]) == 2
        assert "would write into the log being read or the folder beside it" in capsys.readouterr().err
        assert not kept_beside.exists()


def test_a_summarization_call_says_its_unlogged_part_holds_the_conversation_it_summarized(capsys):
    # agent-acompact-*: 169,248 tokens reported, 5,776 counted; the rest is mostly the conversation
    # sent to be summarized, which the transcript does not hold. "system + tools" alone would be wrong.
    assert main(["export", str(SESSION), "--subagent", "acompact-fffbd0"]) == 0
    inferred = json.loads(capsys.readouterr().out)["window"]["categories"]["inferred_system_tools"]
    assert inferred["summarized_conversation"] is True
    assert inferred["label"].startswith("the conversation summarized + system + tools")
    assert main(["export", str(SESSION), "--subagent", "a881341"]) == 0
    inferred = json.loads(capsys.readouterr().out)["window"]["categories"]["inferred_system_tools"]
    assert inferred["summarized_conversation"] is False and inferred["label"].startswith("system + tools")


def _agents_table(app) -> DataTable:
    return app.query_one("#agents", DataTable)


async def _agents_pane(pilot, app, log: Path) -> DataTable:
    """The Agents pane of ``app`` open on ``log``, once the session is read and its two sub-agents are listed."""
    await settle(pilot, app, Session.open(log).message_count)
    await pilot.press("6")
    table = _agents_table(app)
    assert await until(pilot, lambda: table.row_count == 2)
    return table


async def test_a_read_of_the_log_shown_before_a_sub_agent_was_opened_says_nothing_of_the_sub_agent(tmp_path):
    # A read of the session's log under way (the once-a-second look, or a write) failed after the user opened a
    # sub-agent: the header said "STOPPED: the log is no longer followed" over the sub-agent, which was followed.
    if not SESSION.is_file():
        pytest.skip("shared fixtures not found")
    app = CtxtopApp(str(SESSION))
    async with app.run_test(size=SIZE) as pilot:
        table = await _agents_pane(pilot, app, SESSION)
        session_tracker, switched = app.tracker, threading.Event()

        def poll_until_switched(changed):  # (in the worker: fails once the sub-agent is open)
            switched.wait(10)
            raise SourceError("the log is gone")

        session_tracker.poll = poll_until_switched
        app.post_message(LogChanged())
        assert await until(pilot, lambda: app._polling)
        row = next(key.value for key in table.rows if key.value.endswith("agent-a881341.jsonl"))
        table.move_cursor(row=table.get_row_index(row))
        await pilot.press("enter")
        assert await until(pilot, lambda: app.path == row and app.view is not None and app.tracker is not session_tracker)
        switched.set()
        assert await until(pilot, lambda: not app._polling)
        await settle(pilot, app)
        first = str(app.query_one("#header").render()).split("\n")[0]
        assert "● LIVE" in first and "STOPPED" not in first, first


async def test_the_agents_pane_lists_them_opens_one_in_the_same_screen_and_goes_back(tmp_path):
    log = tmp_path / SESSION.name
    shutil.copy(SESSION, log)
    agents = tmp_path / SESSION.stem / "subagents"
    agents.mkdir(parents=True)
    task_lines = (AGENTS / "agent-a881341.jsonl").read_bytes().splitlines(keepends=True)
    (agents / "agent-a881341.jsonl").write_bytes(b"".join(task_lines[:3]))
    app = CtxtopApp(str(log))
    last = Session.open(SESSION).message_count
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, last)
        app.query_one(TabbedContent).active = "tab-agents"
        table = _agents_table(app)
        assert await until(pilot, lambda: table.row_count == 1 and "kind" in table.text_widths)  # (laid out for the pane)
        row = str(agents / "agent-a881341.jsonl")
        # At 120 columns the pane has room for the counts and a few cells of the type, cut with an ellipsis.
        assert str(table.get_cell(row, "kind")) == cut("claude-code-guide", table.text_widths["kind"])
        before = str(table.get_cell(row, "messages"))
        # Live: the sub-agent writes on, and a compaction sub-agent appears.
        with open(agents / "agent-a881341.jsonl", "ab") as handle:
            handle.writelines(task_lines[3:])
        shutil.copy(AGENTS / "agent-acompact-fffbd0.jsonl", agents / "agent-acompact-fffbd0.jsonl")
        assert await until(pilot, lambda: table.row_count == 2 and str(table.get_cell(row, "messages")) != before)
        assert str(table.get_cell(row, "messages")) == "6"
        # Enter opens it in the main view; the header says which, and how to go back.
        await pilot.press("6")  # the Agents pane, which takes the focus: Enter opens the highlighted one
        assert app.focused is table
        table.move_cursor(row=table.get_row_index(row))
        await pilot.press("enter")
        assert await until(pilot, lambda: app.path == row and app.view is not None)
        await settle(pilot, app)
        header = str(app.query_one("#header").render())
        assert "sub-agent a881341 (claude-code-guide) · ⌫ back" in header
        assert "Back to the session" in {command.title for command in app.get_system_commands(app.screen)}
        if _own_conversation():
            assert app.view.snapshot["window"]["reported_tokens"] == 42_182 and app.session.message_count == 6
        await pilot.press("backspace")
        await settle(pilot, app, last)
        assert app.path == str(log) and app.subagent is None
        assert "⌫ back" not in str(app.query_one("#header").render())


@pytest.mark.parametrize("width", [80, 120, 200])
async def test_the_agents_pane_fits_its_type_and_task_columns_cut_with_an_ellipsis(width):
    # At 80 columns the type and task columns went on past the pane's edge, cut there without a mark.
    app = CtxtopApp(str(SESSION))
    async with app.run_test(size=(width, 40)) as pilot:
        table = await _agents_pane(pilot, app, SESSION)
        await pilot.pause()
        assert sum(column.get_render_width(table) for column in table.columns.values()) <= table.scrollable_content_region.width
        full = {"kind": {"claude-code-guide", "compaction"}, "task": {"Research Claude hook output", ""}}
        shown: dict[str, set[str]] = {"kind": set(), "task": set()}
        for row in table.rows:
            for key, column in table.columns.items():
                text = str(table.get_cell(row, key))
                assert len(text) <= column.width, f"{key.value}: {text!r} in {column.width} cells"
                if key.value in full:
                    assert text in full[key.value] or (text.endswith("…") and any(whole.startswith(text[:-1]) for whole in full[key.value]))
                    shown[key.value].add(text)
        if width == 200:  # room for the longest type whole and the start of the task
            assert shown["kind"] == full["kind"] and any(task.startswith("Research") for task in shown["task"])
        if width == 80:  # the counts come first: the texts have no room left
            assert [key.value for key in table.columns] == ["id", "window"]


def test_markdown_lists_the_sub_agents():
    from ctxtop.context.output.markdown import render_markdown

    markdown = render_markdown(build_snapshot(Session.open(SESSION)))
    assert "### Sub-agents" in markdown
    assert "| a881341 | claude-code-guide | 6 | " in markdown and "| Research Claude hook output |" in markdown
    if _own_conversation():
        assert "| a881341 | claude-code-guide | 6 | 42,182 | 21.1% |" in markdown


async def test_a_task_in_wide_characters_is_cut_to_its_column_cells_with_an_ellipsis(tmp_path):
    """The task was cut to the column's width in characters: a Chinese task took twice the cells, and the
    DataTable cropped it at the column's edge without a mark ("研究钩子输")."""
    from rich.cells import cell_len

    log = tmp_path / SESSION.name
    log.write_text(SESSION.read_text().replace("Research Claude hook output", "研究钩子输出的格式与时机以及它们如何影响会话上下文"))
    shutil.copytree(SESSION.with_suffix(""), tmp_path / SESSION.stem)
    app = CtxtopApp(str(log))
    async with app.run_test(size=(200, 40)) as pilot:
        table = await _agents_pane(pilot, app, log)
        assert await until(pilot, lambda: "task" in table.text_widths)
        await pilot.pause()
        task = str(table.get_cell(str(log.with_suffix("") / "subagents" / "agent-a881341.jsonl"), "task"))
        assert task.startswith("研究") and task.endswith("…")
        assert cell_len(task) <= table.columns["task"].width  # type: ignore[index]


PHONE, ADDRESS, KEY = "13800138000", "jöhn.ops@münchen.de", "ghp_R7kLm2Qx9Vb4Nz8Wc1Yt6Hs3Jd5Pf0Ag7Eu"


def _agent_with_personal_data(tmp_path: Path) -> tuple[Path, Path]:
    """The real session with its task sub-agent named by a phone number, of a type that is an address, sent to rotate a key."""
    log = tmp_path / SESSION.name
    log.write_text(SESSION.read_text().replace('"claude-code-guide"', f'"{ADDRESS}"')
                   .replace("Research Claude hook output", f"Rotate {KEY}"))
    agents = tmp_path / SESSION.stem / "subagents"
    shutil.copytree(AGENTS, agents)
    (agents / "agent-a881341.jsonl").rename(agents / f"agent-{PHONE}.jsonl")
    return log, agents / f"agent-{PHONE}.jsonl"


@pytest.mark.parametrize("output", [[], ["--format", "md"], ["--format", "html"]])
def test_redact_masks_a_sub_agents_id_type_and_task_in_exports(tmp_path, capsys, output):
    log, _ = _agent_with_personal_data(tmp_path)
    assert main(["export", str(log), *output]) == 0
    assert PHONE in capsys.readouterr().out or "html" in output  # (the HTML report does not list sub-agents)
    assert main(["export", str(log), "--redact", *output]) == 0
    out = capsys.readouterr().out
    assert not any(secret in out for secret in (PHONE[:5], "jöhn", "ops@", KEY[:8])), output


async def test_redaction_masks_a_sub_agents_id_type_and_task_in_the_agents_pane_and_the_header(tmp_path):
    """With redaction on, the Agents pane masked a sub-agent's task but showed its id (its file's name) and its
    type (the Task call's subagent_type) as they were, and so did the header once it was opened."""
    phone, address, key = PHONE, ADDRESS, KEY
    log, transcript = _agent_with_personal_data(tmp_path)
    row = str(transcript)
    app = CtxtopApp(str(log))
    async with app.run_test(size=(200, 40)) as pilot:
        table = await _agents_pane(pilot, app, log)
        assert await until(pilot, lambda: "task" in table.text_widths)
        cells = lambda: " ".join(str(table.get_cell(row, key)) for key in ("id", "kind", "task"))  # noqa: E731
        assert phone in cells() and address[:8] in cells()  # not redacting: the log's words
        await pilot.press("r")
        assert await until(pilot, lambda: "REDACTED" in str(table.get_cell(row, "id")))
        assert not any(secret in cells() for secret in (phone[:5], address[:4], "ops@", key[:8])), cells()
        table.move_cursor(row=table.get_row_index(row))
        await pilot.press("enter")
        assert await until(pilot, lambda: app.path == row and app.view is not None)
        await settle(pilot, app)
        header = str(app.query_one("#header").render())
        assert "sub-agent [REDACTED:phone] ([REDACTED:email]) · ⌫ back" in header, header
        assert phone[:5] not in header  # nor its file's name, which is made of its id


@pytest.mark.parametrize("how", ["waiting", "progress", "failed"])
def test_redaction_masks_the_logs_name_in_the_header_before_its_first_view(tmp_path, how):
    """Until its first view, the header named the log as it was, redacting or not: a sub-agent's name is its id."""
    log = tmp_path / f"agent-{PHONE}.jsonl"
    app = CtxtopApp(str(log))
    fields = {"waiting": {"waiting": True}, "progress": {"progress": ("read", 0.5)},
              "failed": {"failed": f"internal error reading {log}"}}[how]
    shown = str(app._header(replace(app.state, redacting=False, **fields)))
    assert PHONE in shown
    masked = str(app._header(replace(app.state, redacting=True, **fields)))
    assert PHONE[:5] not in masked and "[REDACTED:phone]" in masked, masked


async def test_the_tui_started_with_redact_is_masked_from_its_first_frame(tmp_path):
    log = tmp_path / f"ops-{PHONE}.jsonl"
    shutil.copy(SESSION, log)
    app = CtxtopApp(str(log), redacting=True)
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot, app, Session.open(log).message_count)
        header = str(app.query_one("#header").render())
        assert "[redacted]" in header and "[REDACTED:phone]" in header and PHONE[:5] not in header, header

