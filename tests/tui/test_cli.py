"""The headless commands: export formats, exit codes, atomic output, read-only logs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ctxtop.context.strategies import STRATEGIES
from ctxtop.parsers.model import CATEGORIES
from ctxtop.tui.cli import main
from ctxtop.tui.demo import demo_path

from ..conftest import DATA


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_json_follows_the_documented_schema(capsys):
    code, out, _ = run(capsys, "export", str(DATA / "claude_compact.jsonl"), "--at", "5")
    assert code == 0
    snapshot = json.loads(out)
    assert snapshot["schema"] == "ctxtop.snapshot/1"
    assert set(snapshot) >= {"schema", "source", "at", "window", "compactions"}
    assert set(snapshot["source"]) >= {"path", "format", "session_id", "model", "messages", "diagnostics"}
    assert snapshot["at"] == {"message": 5, "messages": 9, "timestamp": "2026-01-01T00:00:00Z"}
    assert list(snapshot["window"]["categories"]) == [*CATEGORIES[:-1], "inferred_system_tools", "unattributed"]
    assert snapshot["window"]["reported_tokens"] == 165
    [compaction] = snapshot["compactions"]
    assert {k: compaction[k] for k in ("message", "kind", "trigger", "pre_tokens", "post_tokens")} == {
        "message": 6, "kind": "compact_boundary", "trigger": "auto", "pre_tokens": 170, "post_tokens": 60}
    # auto-detected: the first user message states a rule; the summary dropped it
    assert [(c["text"], c["status"]) for c in snapshot["constraints"]] == [
        ("Never push to main.", "kept"), ("The budget is 500 USD.", "kept")]  # at message 5, before the compaction
    assert [a["kind"] for a in snapshot["alerts"]] == []  # alerts up to message 5 only
    assert snapshot["source"]["diagnostics"]["malformed_lines"] == 2


def test_export_markdown_has_tables(capsys):
    code, out, _ = run(capsys, "export", "--demo", "--format", "md")
    assert code == 0
    assert "| category | tokens | % of window | blocks |" in out
    assert "| tool\\_result |" in out and "compact\\_boundary" in out


def test_export_to_file_is_atomic_and_complete(tmp_path, capsys):
    target = tmp_path / "snap.json"
    target.write_text("old")
    code, out, _ = run(capsys, "export", "--demo", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["source"]["format"] == "claude-code"
    assert [p.name for p in tmp_path.iterdir()] == ["snap.json"]  # no temporary left behind


@pytest.mark.parametrize("output", ["session.jsonl", "./session.jsonl", "link.jsonl", "session/subagents/agent-a1.jsonl"],
                         ids=["itself", "another spelling", "a hard link", "its sub-agents' folder"])
def test_export_never_writes_over_the_log_it_reads(tmp_path, monkeypatch, capsys, output):
    log = tmp_path / "session.jsonl"
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    os.link(log, tmp_path / "link.jsonl")
    before = log.read_bytes()
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "export", "session.jsonl", "-o", output)
    assert code == 2 and out == "" and "would write " in err and "the log being read" in err and err.count("\n") == 1
    assert log.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "session.jsonl"]


@pytest.mark.parametrize("at, shown", [("1", 1), ("390", 390), ("-1", 390), ("-390", 1), ("0", None), ("391", None), ("-391", None)])
def test_a_message_the_session_does_not_hold_is_a_usage_error(capsys, at, shown):
    for command in ("export", "preview"):
        code, out, err = run(capsys, command, "--demo", "--at", at, *(["--json"] if command == "preview" else []))
        if shown is None:  # not the nearest message, silently
            assert (code, out) == (2, "") and err == f"ctxtop: error: --at {at}: the session has 390 message(s): 1 to 390, or -1 to -390 counted from the end\n"
        else:
            place = json.loads(out)["at"]
            assert code == 0 and (place if command == "preview" else place["message"]) == shown


@pytest.mark.parametrize("command", ["check", "watch"])
def test_commands_that_read_the_whole_session_take_no_message(capsys, command):
    code, out, err = run(capsys, command, "--demo", "--at", "5")
    assert (code, out) == (2, "") and "unrecognized arguments: --at" in err and err.count("\n") == 1


def test_markdown_and_html_mark_an_estimated_size_and_a_guessed_limit_as_the_tui_does(tmp_path, capsys):
    # No usage reported and a model ctxtop does not know: the size is our count, the limit a default.
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(json.dumps(record) for record in [
        {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "Never push to main."}},
        {"type": "assistant", "uuid": "a1", "sessionId": "s", "message": {"role": "assistant", "model": "mystery-model-1",
                                                                            "content": [{"type": "text", "text": "Noted."}]}},
    ]) + "\n")
    from ctxtop.context.output.html import render_html
    from ctxtop.context.output.markdown import render_markdown

    _, out, _ = run(capsys, "export", str(log))
    snapshot = json.loads(out)
    window = snapshot["window"]
    assert window["reported_tokens"] is None and window["limit_source"] == "default"
    for output_format in ("md", "html"):  # our count of the text (no usage reported), over a limit ctxtop guessed
        _, out, _ = run(capsys, "export", str(log), "--format", output_format)
        assert f"≈{window['used_tokens']:,} / ≈{window['limit']:,} tokens" in out
    # With the inferred system prompt and tools on top (after a compaction, before the next call): an estimate.
    window["used_tokens"] += 1000
    shown = f"≈{window['used_tokens']:,} / ≈{window['limit']:,} tokens"
    assert shown in render_markdown(snapshot) and shown in render_html(snapshot, [], [])
    # Reported by the log: as it is.
    window.update(reported_tokens=window["used_tokens"], limit_source="model")
    assert f"**Window:** {window['used_tokens']:,} / {window['limit']:,} tokens" in render_markdown(snapshot)


def test_export_never_writes_over_another_log_of_the_session(tmp_path, monkeypatch, capsys):
    log = tmp_path / "session.jsonl"
    log.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    (tmp_path / "session" / "subagents").mkdir(parents=True)
    for name in ("agent-a1.jsonl", "agent-a2.jsonl"):
        (tmp_path / "session" / "subagents" / name).write_bytes(log.read_bytes())
    before = {path: path.read_bytes() for path in tmp_path.rglob("*.jsonl")}
    monkeypatch.chdir(tmp_path)
    for source, output in (("session/subagents/agent-a1.jsonl", "session.jsonl"),  # its parent
                           ("session/subagents/agent-a1.jsonl", "session/subagents/agent-a2.jsonl")):  # a sibling
        code, out, err = run(capsys, "export", source, "-o", output)
        assert (code, out) == (2, "") and "is a session log: ctxtop never writes over one" in err, (source, output)
    assert {path: path.read_bytes() for path in tmp_path.rglob("*.jsonl")} == before
    assert run(capsys, "export", "session.jsonl", "-o", "snapshot.json")[0] == 0
    assert run(capsys, "export", "session.jsonl", "-o", "snapshot.json")[0] == 0  # an earlier export is replaced


def test_export_never_writes_over_a_file_of_a_session_kept_as_a_folder_nor_a_big_document_log(tmp_path, capsys):
    import shutil

    from ..conftest import SHARED_FIXTURES

    shutil.copytree(DATA / "openhands_v1", tmp_path / "conversation")
    event = next((tmp_path / "conversation").rglob("*.json"))
    before = event.read_bytes()
    code, _, err = run(capsys, "export", str(DATA / "claude_compact.jsonl"), "-o", str(event))
    assert code == 2 and "is a session log" in err and event.read_bytes() == before
    inspect = SHARED_FIXTURES / "inspect-ai" / "UKGovernmentBEIS_2025-05-12T20-27-36-04-00_browser.json"
    if inspect.is_file():  # a JSON document that tells its format only past its first 64 KB
        shutil.copy(inspect, tmp_path / "inspect.json")
        code, _, err = run(capsys, "export", str(DATA / "claude_compact.jsonl"), "-o", str(tmp_path / "inspect.json"))
        assert code == 2 and (tmp_path / "inspect.json").read_bytes() == inspect.read_bytes()


def test_the_other_json_outputs_hold_what_the_readme_says(capsys):
    # README, "The other JSON outputs": every key listed, and no other.
    _, out, _ = run(capsys, "check", "--demo", "--json")
    assert set(json.loads(out)) == {"constraints", "auto_detected", "compactions", "findings", "notes", "forensics", "ok"}
    # Each rule with why it was taken and where it was stated, as export's JSON, the TUI and Markdown show them.
    first = json.loads(out)["constraints"][0]
    assert first == {"id": "budget-8000", "text": "预算上限 8000 元，超过必须停下来问我", "source": "auto", "cue": "上限",
                     "origin": "user message", "first_stated": 1}
    _, out, _ = run(capsys, "preview", "--demo", "--json")
    assert set(json.loads(out)) == {"at", "messages", "budget", "window_tokens", "strategies"}
    _, out, _ = run(capsys, "export", "--demo", "--compaction", "1")
    view = json.loads(out)
    assert set(view) == {"number", "message", "after_message", "kind", "trigger", "timestamp", "reported", "estimated", "categories",
                         "blocks", "summary", "opaque", "rules", "facts_lost", "drift", "forensics", "later_violations"}
    assert set(view["blocks"][0]) == {"message", "category", "tokens", "fate", "preview"}
    assert set(view["categories"]["user"]) == {"kept", "cleared", "summarized", "dropped", "added"}
    assert set(view["later_violations"][0]) == {"rule", "lost_at", "became", "broken_at", "detail"}


def test_watch_json_records_hold_what_the_readme_says():
    # README, "The other JSON outputs": watch --json had no list of its fields, and a script had to guess them.
    from ctxtop.context.tracker import Tracker
    from ctxtop.tui.demo import DEMO_WINDOW
    from ctxtop.tui.watch import alert_record, session_record, status

    tracker = Tracker.open(str(demo_path()), window=DEMO_WINDOW)
    update = status(tracker, None)
    assert set(update) == {"type", "time", "messages", "new", "reset", "reported_tokens", "estimated_tokens", "used_tokens",
                           "limit", "limit_source", "percent", "counts_estimated", "categories", "inferred_system_tools",
                           "unattributed"}
    assert all(isinstance(tokens, int) and tokens > 0 for tokens in update["categories"].values())  # {name: tokens}
    assert set(alert_record(tracker.alerts()[0])) == {"type", "failing", "kind", "message", "compaction", "constraint", "detail"}
    assert set(session_record(str(demo_path()))) == {"type", "time", "path"}
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "- `ctxtop watch --json`: one JSON object a line" in readme


def test_export_to_dev_stdout_writes_into_a_pipe():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "ctxtop", "export", "--demo", "-o", "/dev/stdout"], capture_output=True, timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)["schema"] == "ctxtop.snapshot/1", done.stderr


def test_export_to_unwritable_place_fails_in_one_line(capsys):
    code, _, err = run(capsys, "export", "--demo", "-o", "/nonexistent-dir/snap.json")
    assert code == 2 and err.startswith("ctxtop: error: cannot write") and err.count("\n") == 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "/no/such/file.jsonl"], "no such file"),
        (["export", "s3://bucket/session.jsonl"], "a URL; ctxtop opens local files"),
        (["check", "https://example.com/session.jsonl"], "a URL; ctxtop opens local files"),
        (["watch", "s3://bucket/session.jsonl"], "a URL; ctxtop opens local files"),
        (["export"], "no session given"),
        (["export", "--demo", "--format", "xml"], "--format must be"),
        (["export", "--demo", "--encoding", "klingon"], "unknown encoding"),
        (["export", "--demo", "--window", "0"], "must be positive"),
        (["export", "--demo", "--at", "x"], "not a message number"),
        # An empty --pins (a CI script's unset variable) was no pins file at all: the team's rules went unchecked, silently.
        (["check", "--demo", "--pins", ""], "argument --pins: a file name, not an empty one"),
        (["export", "--demo", "--pins", " "], "argument --pins: a file name, not an empty one"),
        (["audit", str(DATA / "claude_compact.jsonl"), "--out", "/nonexistent/out", "--pins", ""], "argument --pins: a file name"),
        # An empty --pin (a CI script's unset variable) was dropped unsaid: the rule meant went unchecked, and check passed.
        (["check", "--demo", "--pin", ""], "argument --pin: a rule's text, not an empty one"),
        (["export", "--demo", "--pin", "never email", "--pin", "  "], "argument --pin: a rule's text, not an empty one"),
        # A second --pins replaced the first unsaid: the first file's rules went unchecked.
        (["check", "--demo", "--pins", "a.toml", "--pins", "b.toml"],
         "argument --pins: given twice: one pins file (put every rule in it)"),
        (["audit", str(DATA / "claude_compact.jsonl"), "--out", "/nonexistent/out", "--pins", "a.toml", "--pins", "b.toml"],
         "argument --pins: given twice: one pins file (put every rule in it)"),
        # An empty -o was taken as the current folder: "cannot write : Is a directory", after reading the whole log.
        (["export", "--demo", "-o", ""], "argument -o/--output: a file name, not an empty one"),
        # An empty --summarizer skipped the summarizer's check, silently: check passed on the real summaries alone.
        (["check", "--demo", "--summarizer", ""], "argument --summarizer: a command, not an empty one"),
        (["replay-compaction", "--demo", "--compaction", "1", "--summarizer", " "], "argument --summarizer: a command, not an empty one"),
        # An empty --command fell back to this ctxtop's path, silently: the hooks ran another command than the one meant.
        (["install-hooks", "--dry-run", "--command", ""], "argument --command: a command, not an empty one"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("written", "tokens"), [("200000", 200_000), ("200_000", 200_000), ("200k", 200_000), ("1m", 1_000_000),
                                                 ("1.5M", 1_500_000)])
def test_window_and_budget_take_token_counts_as_strategies_do(capsys, written, tokens):
    # `--strategy trigger=100k` was taken, `--budget 100k` and `--window 200k` refused as "not a whole number".
    code, out, _ = run(capsys, "export", "--demo", "--window", written)
    assert code == 0 and json.loads(out)["window"]["limit"] == tokens
    code, out, _ = run(capsys, "preview", "--demo", "--budget", written, "--json")
    assert code == 0 and json.loads(out)["budget"] == tokens


@pytest.mark.parametrize("content", [b"", b"\x00\x00\x00\n", b"\xff\xfe garbage\n", b"[" * 10000 + b"\n"])
def test_hostile_files_fail_cleanly(tmp_path, capsys, content):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    code, _, err = run(capsys, "export", str(path))
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_fifo_is_refused(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "export", str(fifo))
    assert code == 2 and "not a regular file" in err


def test_log_format_override(capsys):
    code, out, _ = run(capsys, "export", str(DATA / "openai_messages.jsonl"), "--format", "openai-messages")
    assert code == 0 and json.loads(out)["source"]["format"] == "openai-messages"
    code, _, err = run(capsys, "export", str(DATA / "openai_messages.jsonl"), "--log-format", "codex")
    # A forced parser that reads no message from a non-empty file says so, never "0 messages" and exit 0.
    assert code == 2 and "no message could be read as codex" in err and err.count("\n") == 1
    # Two log formats named, one in --format: the other was kept unsaid, and the log read as the user did not ask.
    code, out, err = run(capsys, "export", str(DATA / "openai_messages.jsonl"), "--format", "codex", "--log-format", "openai-messages")
    assert (code, out) == (2, "") and err == "ctxtop: error: --format codex and --log-format openai-messages name two log formats: give one\n"
    code, out, err = run(capsys, str(DATA / "openai_messages.jsonl"), "--format", "codex", "--log-format", "openai-messages")
    assert (code, out) == (2, "") and err == "ctxtop: error: --format codex and --log-format openai-messages name two log formats: give one\n"


def test_formats_lists_every_parser(capsys):
    code, out, _ = run(capsys, "formats")
    assert code == 0
    for name in ("claude-code", "codex", "anthropic-request", "openai-messages"):
        assert name in out
    assert "~/.claude/projects" in out


def test_commands_never_change_the_log(tmp_path, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    for argv in (["export", str(path)], ["export", str(path), "--format", "md"], ["export", str(path), "--at", "3"]):
        assert run(capsys, *argv)[0] == 0
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_python_dash_m_ctxtop_runs(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "ctxtop", "formats"], capture_output=True, text=True)
    assert result.returncode == 0 and "claude-code" in result.stdout


def test_the_version_is_looked_up_only_when_asked_for(tmp_path):
    import subprocess
    import sys
    from importlib.metadata import version

    result = subprocess.run([sys.executable, "-m", "ctxtop", "--version"], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"ctxtop {version('ctxtop')}\n", "")
    # Every other command goes without the package metadata (20–30 ms of imports before each one).
    code = ("import sys; from ctxtop.tui.cli import build_parser, main; build_parser()\n"
            "assert main(['export', '--demo', '-o', sys.argv[1]]) == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('importlib.metadata')))")
    loaded = subprocess.run([sys.executable, "-c", code, str(tmp_path / "demo.json")], capture_output=True, text=True)
    assert (loaded.returncode, loaded.stdout) == (0, "[]\n"), loaded.stderr


def test_a_closed_pipe_is_not_an_error():
    import subprocess
    import sys

    result = subprocess.run(f"{sys.executable} -m ctxtop export --demo | head -c 10", shell=True, capture_output=True, text=True, timeout=60)
    assert result.stdout == '{\n  "schem' and result.stderr == ""


def test_a_rebuilt_token_cache_is_told_on_stderr(capsys):
    cache = Path(os.environ["CTXTOP_CACHE_DIR"]) / "tokens.sqlite"
    cache.write_bytes(b"this is not a database" * 100)
    code, out, err = run(capsys, "export", "--demo")
    assert code == 0 and json.loads(out)["at"]["message"] > 0  # the snapshot as usual
    notes = err.splitlines()
    assert len(notes) == 1 and notes[0].startswith("ctxtop: note: the token cache was unreadable") and "rebuilt" in notes[0]
    code, out, err = run(capsys, "export", "--demo")
    assert code == 0 and err == ""  # told once: the rebuilt cache is sound


def test_a_directory_stands_for_its_newest_session_in_every_command(tmp_path, capsys):
    older, newer = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    older.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    newer.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:40]))
    os.utime(older, (1_000_000, 1_000_000))
    for argv in (["export", str(tmp_path)], ["check", str(tmp_path)], ["preview", str(tmp_path)]):
        code, out, err = run(capsys, *argv)
        assert code in (0, 1) and out, argv  # (check fails on what it finds: exit 1)
        assert err.splitlines()[0] == f"ctxtop: newest session in {tmp_path}: b.jsonl"
    assert json.loads(run(capsys, "export", str(tmp_path))[1])["source"]["path"] == str(newer)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = run(capsys, "export", str(empty))
    assert (code, out) == (2, "") and err == f"ctxtop: error: {empty}: no session logs (*.jsonl, *.json, *.eval, *.traj) in this directory\n"


@pytest.mark.parametrize("command, collected", [("export", False), ("check", False), ("preview", False), ("watch", True)])
def test_a_command_that_reads_once_runs_without_the_cycle_collector_and_gives_it_back(monkeypatch, command, collected):
    # (a long-running one keeps it: its entries come and go)
    import gc

    from ctxtop.tui import cli

    seen = []
    monkeypatch.setitem(cli.COMMANDS, command, lambda args: seen.append(gc.isenabled()) or 0)
    assert gc.isenabled()
    assert main([command, "--demo"]) == 0
    assert seen == [collected] and gc.isenabled()
    monkeypatch.setitem(cli.COMMANDS, command, lambda args: 1 // 0)
    assert main([command, "--demo"]) == 2 and gc.isenabled()  # given back after a failure too


def test_a_folder_opens_its_newest_session_passing_over_a_newer_file_that_is_no_session(tmp_path, capsys):
    session = tmp_path / "a.jsonl"
    session.write_bytes(demo_path().read_bytes())
    os.utime(session, (time.time() - 60, time.time() - 60))
    (tmp_path / "settings.json").write_text('{"theme": "dark"}')  # newer, and read whole: no session log
    (tmp_path / "zeros.jsonl").write_bytes(b"\0" * 100)
    assert main(["export", str(tmp_path)]) == 0
    assert "newest session in" in (err := capsys.readouterr().err) and err.rstrip().endswith("a.jsonl")



def test_an_openhands_conversation_below_a_folder_does_not_make_the_folder_one_session(tmp_path, capsys):
    # An `events/` folder two levels down (or any folder whose name ends in "events") made the folder given one
    # OpenHands session: the Claude Code session beside it was never found, and `-o` into the folder was refused.
    import shutil

    logs = tmp_path / "logs"
    shutil.copytree(DATA / "openhands_v1", logs / "conversations" / "c1")
    (logs / "notes" / "myevents").mkdir(parents=True)
    (logs / "notes" / "myevents" / "1.json").write_text("{}")
    for folder in (logs / "conversations" / "c1", logs / "notes"):
        for path in [*folder.rglob("*"), folder]:
            os.utime(path, (1_000_000, 1_000_000))
    session = logs / "s.jsonl"
    session.write_bytes((DATA / "claude_compact.jsonl").read_bytes())
    code, out, err = run(capsys, "export", str(tmp_path), "-o", str(tmp_path / "snapshot.json"))
    assert code == 0, err
    assert json.loads((tmp_path / "snapshot.json").read_text())["source"]["path"] == str(session)
    # The conversation's own folder is still one session.
    assert json.loads(run(capsys, "export", str(logs / "conversations" / "c1"))[1])["source"]["format"] == "openhands-events"


@pytest.mark.parametrize("text", ["", "# our rules go here\n", "pin = []\n"], ids=["empty", "comments only", "no table"])
def test_a_pins_file_that_pins_nothing_leaves_auto_detection_on(tmp_path, capsys, text):
    # Auto-detection is on "when no pin came from the command line or a pins file": a pins file with no pin in it
    # switched it off, and `check` passed with "no rule to check" a session whose rules it had found lost.
    pins = tmp_path / "pins.toml"
    pins.write_text(text)
    plain = run(capsys, "check", "--demo", "--json")
    code, out, err = run(capsys, "check", "--demo", "--json", "--pins", str(pins))
    assert (code, json.loads(out)["constraints"], json.loads(out)["auto_detected"]) == (
        plain[0], json.loads(plain[1])["constraints"], True) and plain[0] == 1, err


def test_export_with_a_budget_previews_the_strategies_under_it_as_with_a_strategy(capsys):
    # `export --strategy X` holds X's preview, but `export --budget 500` held none, and no "budget": the budget asked
    # for was dropped unsaid.
    code, out, _ = run(capsys, "export", "--demo", "--at", "203", "--budget", "500")
    snapshot = json.loads(out)
    assert code == 0 and snapshot["budget"] == 500
    assert {p["strategy"] for p in snapshot["strategies"]} == set(STRATEGIES)
