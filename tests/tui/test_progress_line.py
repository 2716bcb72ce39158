"""The progress line of the commands that read a whole log: for a person at a terminal only, never in the
output, never with a log's control sequences, and gone before the output or an error is printed."""

from __future__ import annotations

import io
import json
import os

import pytest

from ctxtop.tui import progress_line
from ctxtop.tui.cli import main
from ctxtop.tui.progress_line import ProgressLine

from ..conftest import DATA, SHARED_FIXTURES

ERASE = "\r\x1b[K"


class Terminal(io.StringIO):
    """What a terminal's stderr looks like to the line: a stream that says it is one."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_drawn_only_after_a_while_and_at_most_so_often():
    stream, clock = Terminal(), Clock()
    line = ProgressLine(stream, clock)
    line.show("ctxtop: reading a.jsonl 1%")
    assert stream.getvalue() == ""  # a small log prints nothing
    clock.now += progress_line.SHOW_AFTER
    line.show("ctxtop: reading a.jsonl 40%")
    assert stream.getvalue() == ERASE + "ctxtop: reading a.jsonl 40%"
    clock.now += progress_line.REDRAW_EVERY / 2
    line.show("ctxtop: reading a.jsonl 41%")
    assert stream.getvalue().endswith("40%")  # not redrawn yet
    line.show("ctxtop: read a.jsonl; auditing", now=True)  # a stage ends: drawn at once
    assert stream.getvalue().endswith(ERASE + "ctxtop: read a.jsonl; auditing")
    clock.now += 2 * progress_line.REDRAW_EVERY
    line.show("ctxtop: reading a.jsonl 42%")
    assert stream.getvalue().endswith(ERASE + "ctxtop: reading a.jsonl 42%")
    line.clear()
    assert stream.getvalue().endswith("42%" + ERASE)
    line.clear()
    assert stream.getvalue().endswith("42%" + ERASE)  # wiped once


def test_nothing_at_all_when_stderr_is_not_a_terminal():
    stream, clock = io.StringIO(), Clock()
    with ProgressLine(stream, clock) as line:
        clock.now += 10
        line.show("ctxtop: reading a.jsonl 50%", now=True)
    assert stream.getvalue() == ""


def test_a_log_name_is_never_a_control_sequence_and_the_line_fits_the_terminal(monkeypatch):
    monkeypatch.setattr(progress_line.shutil, "get_terminal_size", lambda: os.terminal_size((21, 24)))
    stream, clock = Terminal(), Clock()
    line = ProgressLine(stream, clock)
    clock.now += 10
    line.show("ctxtop: reading \x1b]0;owned\x07\x1b[2J\u202eevil.jsonl 5%")
    drawn = stream.getvalue().removeprefix(ERASE)
    assert "\x1b" not in drawn and "\x07" not in drawn and "\u202e" not in drawn
    assert drawn == "ctxtop: reading e…"  # 18 cells: it never wraps, nor does the "^C" a Ctrl-C echoes after it
    stream = Terminal()
    line = ProgressLine(stream, clock)
    clock.now += 10
    line.show("ctxtop: 读取会话日志文件中的所有内容 5%")
    from rich.cells import cell_len

    assert cell_len(stream.getvalue().removeprefix(ERASE)) <= 18  # wide characters counted as two cells


def terminal_stderr(monkeypatch) -> Terminal:
    """The CLI's stderr made a terminal, and the line drawn from the first report on (called in the test
    itself: pytest's capture puts its own stderr back between a fixture and the test)."""
    stream = Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr(progress_line, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress_line, "REDRAW_EVERY", 0.0)
    monkeypatch.setattr(progress_line.shutil, "get_terminal_size", lambda: os.terminal_size((200, 24)))
    return stream


@pytest.mark.parametrize("log", ["claude_compact.jsonl", "openhands_condensation.json"])
def test_export_at_a_terminal_says_how_far_it_read_and_prints_the_same_snapshot(log, capsys, monkeypatch):
    stderr = terminal_stderr(monkeypatch)
    assert main(["export", str(DATA / log)]) == 0
    at_a_terminal = capsys.readouterr().out
    drawn = stderr.getvalue()
    assert drawn.startswith(ERASE + "ctxtop: ")
    assert f"{log} 100%" in drawn  # JSON Lines are read; a document is parsed, then counted
    assert drawn.endswith(f"{ERASE}ctxtop: read {log}; finding its rules and auditing its compactions…{ERASE}")
    stderr.isatty = lambda: False  # the same command, stderr a pipe
    stderr.seek(0)
    stderr.truncate()
    assert main(["export", str(DATA / log)]) == 0
    assert stderr.getvalue() == ""
    assert json.loads(capsys.readouterr().out) == json.loads(at_a_terminal)


def test_an_error_after_the_read_starts_on_a_clean_line(tmp_path, monkeypatch):
    stderr = terminal_stderr(monkeypatch)
    log = tmp_path / "session.jsonl"
    log.write_text('{"type": "user", "message": "not a message"}\n' * 3)
    assert main(["check", str(log), "--log-format", "claude-code"]) == 2
    drawn = stderr.getvalue()
    assert "reading session.jsonl" in drawn
    wiped, _, after = drawn.rpartition(ERASE)
    assert wiped and after.startswith("ctxtop: ") and "no message could be read" in after and after.count("\n") == 1


def test_the_fleet_audit_counts_the_sessions_on_the_same_line(tmp_path, monkeypatch):
    pytest.importorskip("duckdb", reason="the fleet extra is not installed")
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("claude_compact.jsonl", "codex_local_compaction.jsonl", "gemini_chat.jsonl"):
        (folder / name).write_bytes((DATA / name).read_bytes())
    stderr = terminal_stderr(monkeypatch)
    assert main(["audit", str(folder), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    drawn = stderr.getvalue()
    assert f"{ERASE}ctxtop: audited 1 / 3" in drawn and f"{ERASE}ctxtop: audited 3 / 3{ERASE}" in drawn
    assert drawn.rpartition(ERASE)[2].startswith("ctxtop: 3 session(s) audited")  # the summary on a clean line


def test_a_subagent_export_says_how_far_it_read_its_session_then_the_subagent(capsys, monkeypatch):
    session = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    if not session.exists():
        pytest.skip(f"the shared fixture with sub-agents is not in {SHARED_FIXTURES}")
    agent = sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))[0]
    stderr = terminal_stderr(monkeypatch)
    assert main(["export", str(session), "--subagent", agent.stem.removeprefix("agent-")]) == 0
    drawn = stderr.getvalue()
    assert drawn.index(f"reading {session.name} 100%") < drawn.index(f"reading {agent.name} 100%")
    assert drawn.endswith(f"ctxtop: read {agent.name}; finding its rules and auditing its compactions…{ERASE}")
    assert json.loads(capsys.readouterr().out)["source"]["path"].endswith(agent.name)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_the_line_fits_the_terminal_of_stderr_when_stdout_is_a_pipe(monkeypatch):
    """``ctxtop export big.jsonl | jq`` on a 40-column terminal: stdout is a pipe (80 columns to
    ``shutil.get_terminal_size``), but the line is drawn on stderr, 40 columns wide; a line cut to 79
    wrapped there, and its erase wiped only its second row, leaving the first on screen."""
    import fcntl
    import struct
    import termios

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(progress_line.shutil, "get_terminal_size", lambda: os.terminal_size((80, 24)))  # stdout: a pipe
    main_side, terminal_side = os.openpty()
    fcntl.ioctl(terminal_side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 40, 0, 0))
    stream = os.fdopen(terminal_side, "w", encoding="utf-8")
    try:
        clock = Clock()
        line = ProgressLine(stream, clock)
        clock.now += 10
        line.show("ctxtop: read big.jsonl; finding its rules and auditing its compactions…", now=True)
        drawn = os.read(main_side, 4096).decode("utf-8").replace("\r\n", "\n")
    finally:
        stream.close()
        os.close(main_side)
    from rich.cells import cell_len

    shown = drawn.removeprefix(ERASE)
    assert shown.endswith("…") and cell_len(shown) == 37  # room for the "^C" a Ctrl-C echoes, in the 40 columns


def test_a_long_log_name_is_cut_before_the_figure_after_it(monkeypatch, tmp_path):
    """A Codex log's name is 70 characters: at 80 columns the line was cut at its end, so the percentage never
    showed ("ctxtop: reading rollout-2026-…-4079fe9726a9.jso…" for the whole read: it looked hung)."""
    from rich.cells import cell_len

    from ctxtop.tui.cli import _reading

    monkeypatch.setattr(progress_line.shutil, "get_terminal_size", lambda: os.terminal_size((80, 24)))
    name = "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    stream, clock = Terminal(), Clock()
    progress = _reading(ProgressLine(stream, clock), str(tmp_path / name))
    clock.now += 10
    progress("read", 0.45)
    clock.now += 10
    progress("audit", 1.0)
    reading, auditing = stream.getvalue().split(ERASE)[1:]
    assert reading.startswith("ctxtop: reading rollout-2026-") and reading.endswith("… 45%") and cell_len(reading) <= 77
    assert auditing.startswith("ctxtop: read rollout-") and auditing.endswith("…; finding its rules and auditing its compactions…")
    assert cell_len(auditing) <= 77
