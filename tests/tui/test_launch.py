"""Which session `ctxtop` opens: a file, a directory's newest session, or the newest agent session."""

from __future__ import annotations

import os

import pytest

from ctxtop.tui import cli
from ctxtop.tui.discover import newest_session, resolve_session
from ctxtop.tui.errors import UsageError

from ..conftest import DATA, SHARED_FIXTURES


def _touch(path, mtime):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    os.utime(path, (mtime, mtime))
    return path


def test_a_directory_opens_its_newest_session(tmp_path):
    _touch(tmp_path / "a" / "old.jsonl", 1_000)
    newest = _touch(tmp_path / "b" / "new.jsonl", 2_000)
    (tmp_path / "notes.txt").write_text("not a session")
    assert newest_session(tmp_path) == newest
    path, notice = resolve_session(str(tmp_path))
    assert path == newest and "new.jsonl" in notice


@pytest.mark.parametrize("log", ["inspect-ai/log_read_sample.eval", "swe-agent/function_calling_simple.traj"])
def test_a_directory_of_logs_not_named_json_opens_its_newest(tmp_path, log):
    # `ctxtop formats` sends an Inspect AI user to ./logs/*.eval, and SWE-agent keeps <instance>.traj: `ctxtop check
    # logs/` said "no session logs (*.jsonl, *.json) in this directory" of a folder of them.
    if not (SHARED_FIXTURES / log).is_file():
        pytest.skip(f"shared fixture {log} not found")
    copy = tmp_path / "logs" / os.path.basename(log)
    copy.parent.mkdir()
    copy.write_bytes((SHARED_FIXTURES / log).read_bytes())
    assert resolve_session(str(copy.parent)) == (copy, f"newest session in {copy.parent}: {copy.name}")


def test_an_empty_directory_is_a_clear_error(tmp_path):
    with pytest.raises(UsageError, match="no session logs"):
        resolve_session(str(tmp_path))


def _home(monkeypatch, home):
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)


def test_no_argument_picks_the_newest_agent_session_and_says_so(tmp_path, monkeypatch):
    _home(monkeypatch, tmp_path)
    _touch(tmp_path / ".claude" / "projects" / "p" / "claude.jsonl", 1_000)
    codex = _touch(tmp_path / ".codex" / "sessions" / "2026" / "01" / "02" / "rollout.jsonl", 3_000)
    path, notice = resolve_session(None)
    assert path == codex and str(codex) in notice


def test_no_argument_picks_the_newest_session_where_the_agents_were_told_to_keep_them(tmp_path, monkeypatch):
    # CLAUDE_CONFIG_DIR and CODEX_HOME move ~/.claude and ~/.codex (a second account, say): their sessions are there,
    # and ctxtop looked in ~/.claude/projects and ~/.codex/sessions alone.
    _home(monkeypatch, tmp_path / "home")
    _touch(tmp_path / "home" / ".claude" / "projects" / "p" / "stale.jsonl", 5_000)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "work-claude"))
    claude = _touch(tmp_path / "work-claude" / "projects" / "p" / "claude.jsonl", 1_000)
    assert resolve_session(None)[0] == claude
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "work-codex"))
    codex = _touch(tmp_path / "work-codex" / "sessions" / "2026" / "01" / "02" / "rollout.jsonl", 3_000)
    assert resolve_session(None)[0] == codex


def test_no_argument_and_no_sessions_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    _home(monkeypatch, tmp_path)
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none found under" in err and "ctxtop demo" in err


def test_demo_replays_unless_told_not_to(monkeypatch):
    launched = {}

    class FakeApp:
        return_code = 0
        worker_errors: list = []  # internal errors of its workers (none here)
        load_error = None

        def __init__(self, **kwargs):
            launched.update(kwargs)

        def run(self):
            pass

    monkeypatch.setattr("ctxtop.tui.app.CtxtopApp", FakeApp)
    assert cli.main(["demo"]) == 0
    assert launched["replay_speed"] == 1.0 and launched["window"] == 8000
    assert cli.main(["demo", "--speed", "5"]) == 0
    assert launched["replay_speed"] == 5.0
    assert cli.main(["demo", "--no-replay"]) == 0
    assert launched["replay_speed"] is None
    assert cli.main(["demo", "--speed", "0"]) == 2
    assert cli.main([str(DATA / "claude_compact.jsonl"), "--pin", "rule one"]) == 0
    assert launched["replay_speed"] is None and launched["pins"] == ["rule one"]
    assert cli.main([str(DATA / "claude_compact.jsonl"), "--poll", "0.5"]) == 0
    assert launched["poll_seconds"] == 0.5
    assert cli.main([str(DATA / "claude_compact.jsonl"), "--redact"]) == 0
    assert launched["redacting"] is True  # the TUI starts masked, as export --redact writes


def test_the_newest_session_is_looked_for_a_few_folders_down_and_not_among_sub_agents(tmp_path):
    codex = _touch(tmp_path / "2026" / "12" / "05" / "rollout-1.jsonl", 2_000)  # Codex's sessions/YYYY/MM/DD
    _touch(tmp_path / "proj" / "abc" / "subagents" / "agent-1.jsonl", 3_000)  # Claude Code: the session's, newer
    _touch(tmp_path / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "deep.jsonl", 4_000)  # no sessions folder is that deep
    assert newest_session(tmp_path) == codex
    assert newest_session(tmp_path / "proj" / "abc" / "subagents").name == "agent-1.jsonl"  # named: it is looked in


def test_a_sub_agent_transcript_beside_its_session_is_not_the_newest_session(tmp_path):
    # Claude Code 2.0.x keeps a sub-agent's agent-<id>.jsonl beside its session, written while the session
    # waits for it: `ctxtop DIR` opened the sub-agent, and watch DIR switched to it as a newer session.
    session = _touch(tmp_path / "7f2abd2d.jsonl", 1_000)
    _touch(tmp_path / "agent-0c4c3cf8.jsonl", 2_000)
    assert newest_session(tmp_path) == session
    agents = tmp_path / "agents"
    alone = _touch(agents / "agent-1.jsonl", 3_000)
    assert newest_session(agents) == alone  # a folder of sub-agents only, named: they are looked in


def test_a_folder_with_too_many_files_to_search_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr("ctxtop.tui.discover.MAX_SEARCHED_FILES", 5)
    for n in range(6):
        _touch(tmp_path / f"{n}.txt", 1_000)
    with pytest.raises(UsageError, match="more than 5 files to look through"):
        resolve_session(str(tmp_path))
