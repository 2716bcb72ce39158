"""Issue 18, headless: hostile and unlucky input through the CLI — one line and exit 2, or a counted
diagnostic; never a traceback, never a control sequence on a terminal, never a replaced device.

Items 14–27 (hangs, memory, following, caches) are tested where their mechanisms live:
test_limits.py, test_follow.py, test_session_index.py, test_formats.py, test_tokens.py, test_watch.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import stat
import tempfile
import threading
from pathlib import Path

import pytest

from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.pin_store import SavedPins, load_session_pins, save_session_pins
from ctxtop.context.sanitize import clean_text
from ctxtop.context.window.session import Session
from ctxtop.parsers.jsonl import MAX_DEPTH
from ctxtop.tui.cli import main
from ctxtop.tui.discover import newest_session
from ctxtop.tui.watch import print_record

from ..conftest import DATA

CLAUDE = (DATA / "claude_compact.jsonl").read_text()
CODEX = (DATA / "codex_local_compaction.jsonl").read_text()
HUGE = str(2**70)
# What a terminal must never receive raw: ESC, BEL, C1 CSI/OSC/ST, a bidi override.
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\u202e")
HOSTILE_TEXT = "\x1b]0;pwned\x07 \x1b[2J \x9b31m \x9d0;t\x9c \u202eevil"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def assert_one_line_error(code, err):
    assert code == 2, err
    assert err.startswith("ctxtop") and err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err


def assert_terminal_safe(text: str):
    assert not any(c in text for c in TERMINAL_CONTROLS), repr(text)


def with_user_text(text: str) -> str:
    """The Claude Code fixture with ``text`` in its first user message (JSON-escaped, as a writer would)."""
    return CLAUDE.replace("Never push to main.", json.dumps(text)[1:-1])


# --- 5, 6, 7: terminal injection --------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["export", "{dir}/\x1b]0;pwned\x07\x1b[2J.jsonl"],
    ["check", "{dir}/\x1b]52;c;SGVsbG8=\x07.jsonl"],
    ["export", "--demo", "--format", "\x1b[2J\x9b31m"],
    ["export", "--demo", "--at", "\x1b]0;t\x07"],
], ids=["missing file", "osc52 name", "bad format", "bad option value"])
def test_escape_codes_in_file_names_and_options_never_reach_stderr(tmp_path, capsys, argv):
    code, _, err = run(capsys, *[a.format(dir=tmp_path) for a in argv])
    assert_one_line_error(code, err)
    assert_terminal_safe(err)


def test_escape_codes_in_an_unreadable_files_name_never_reach_stderr(tmp_path, capsys):
    bad = write(tmp_path / "\x1b]0;pwned\x07.jsonl", "not a log\n")
    code, _, err = run(capsys, "export", bad)
    assert_one_line_error(code, err)
    assert_terminal_safe(err)
    assert "pwned" not in err and ".jsonl: not a session log" in err  # the OSC sequence goes whole, payload and all


@pytest.mark.parametrize("argv", [["export"], ["check", "--json"], ["preview", "--json"], ["export", "--strategies"],
                                  ["export", "--format", "md"], ["export", "--format", "html"], ["check"], ["preview"],
                                  ["export", "--compaction", "1", "--format", "md"]])
def test_c1_controls_and_bidi_overrides_never_reach_the_output(tmp_path, capsys, argv):
    log = write(tmp_path / "c1.jsonl", with_user_text("Never push to main. " + HOSTILE_TEXT)
                .replace('"name": "Bash"', '"name": ' + json.dumps("Bash" + HOSTILE_TEXT)))
    code, out, err = run(capsys, *argv, log, "--pin", "Never push to main. " + HOSTILE_TEXT)
    assert code in (0, 1), err
    assert_terminal_safe(out)
    # Nor spelled out: a rule quoted in an alert's detail once showed its escape codes as "\x1b]0;pwned\x07".
    assert not any(spelled in out for spelled in ("\\x1b", "\\x9b", "\\x07", "\\u202e", "\\u001b", "\\u009b")), out
    if "--json" in argv or argv in (["export"], ["export", "--strategies"]):
        document = json.loads(out)  # decoded, as `jq -r` prints a field: the controls are gone from the data too
        decoded = json.dumps(document, ensure_ascii=False)
        assert_terminal_safe(decoded)
        assert ("Never push to main." in decoded and "evil" in decoded) or argv[0] == "preview"  # (which names rules by id)


def test_watch_json_lines_strip_control_sequences_from_the_data_itself():
    out = io.StringIO()
    print_record({"type": "alert", "detail": HOSTILE_TEXT, "constraint": "\x9b2J"}, as_json=True, redacted=False, out=out)
    line = out.getvalue()
    assert line.count("\n") == 1
    assert_terminal_safe(line)
    record = json.loads(line)  # what `jq -r .detail` would print: no escape code either
    assert record["detail"] == clean_text(HOSTILE_TEXT) and record["constraint"] == ""
    assert_terminal_safe(record["detail"])


def test_watch_text_lines_strip_control_sequences():
    out = io.StringIO()
    print_record({"type": "alert", "failing": True, "message": 3, "kind": "constraint_lost", "constraint": "a\x1b]0;t\x07b",
                  "detail": HOSTILE_TEXT, "compaction": None}, as_json=False, redacted=False, out=out)
    assert_terminal_safe(out.getvalue())


def test_json_document_strips_control_sequences_from_strings_and_keys_and_stays_json():
    value = {"k\x9b": ["\x85\u2028\u2066x\u2069", "\ud800 lone", 2**70, 2**64 - 1, "a\x1b]0;title\x07b\u202ec"], "ok": ("t", 1)}
    text = json_document(value)
    assert_terminal_safe(text)
    assert "\x85" not in text and "\u2028" not in text and "\\u001b" not in text and "\\u009b" not in text
    back = json.loads(text)
    # Decoded, as jq -r would print them: the controls are gone, not escaped; JavaScript's line terminator is data.
    assert list(back) == ["k", "ok"] and back["k"][0] == "\u2028x" and back["k"][1] == "\ufffd lone"
    assert back["k"][3] == 2**64 - 1 and back["k"][4] == "abc" and back["ok"] == ["t", 1]


def test_escape_codes_in_a_pin_id_are_not_printed_by_check(tmp_path, capsys):
    pins = write(tmp_path / "pins.toml", '[[pin]]\nid = "x\\u001b]0;pwned\\u0007\\u009b2J\\u202e"\ntext = "Never push to main."\n')
    code, out, err = run(capsys, "check", DATA / "claude_compact.jsonl", "--pins", pins)
    assert code == 1 and "constraint_lost" in out, err
    assert_terminal_safe(out + err)


# --- 8, 9, 30, 31: numbers -------------------------------------------------------------------------
def export_json(capsys, path) -> dict:
    code, out, err = run(capsys, "export", path)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("log, mutation", [
    ("claude", ('"input_tokens": 10,', f'"input_tokens": {HUGE},')),
    ("claude", ('"preTokens": 170', f'"preTokens": {HUGE}')),
    ("claude", ('"output_tokens": 5}', f'"output_tokens": {2**64 - 1}}}')),  # 64 bits, but no count
    ("codex", ('"input_tokens": 1200', f'"input_tokens": {HUGE}')),
    ("codex", ('"model_context_window": 258400', f'"model_context_window": {HUGE}')),
    ("codex", ('"model_context_window": 258400', '"model_context_window": 1' + "0" * 5000)),  # past int()'s digit limit
], ids=["usage", "preTokens", "u64 output", "codex token_count", "codex window", "5000 digits"])
def test_integers_beyond_64_bits_are_counted_and_ignored(tmp_path, capsys, log, mutation):
    text = (CLAUDE if log == "claude" else CODEX).replace(*mutation)
    assert text != (CLAUDE if log == "claude" else CODEX)
    snapshot = export_json(capsys, write(tmp_path / "huge.jsonl", text))
    diagnostics = snapshot["source"]["diagnostics"]
    # The number is counted and ignored; the record around it is read (not lost as a malformed line).
    intact = export_json(capsys, write(tmp_path / "intact.jsonl", CLAUDE if log == "claude" else CODEX))
    assert diagnostics["invalid_numbers"] >= 1
    assert diagnostics["malformed_lines"] == intact["source"]["diagnostics"]["malformed_lines"]
    assert snapshot["at"]["messages"] == intact["at"]["messages"]
    window = snapshot["window"]
    assert window["limit"] < 2**53 and (window["reported_tokens"] or 0) < 2**53
    for command in (["export", "--format", "md"], ["check", "--json"], ["preview"]):
        code, _, err = run(capsys, *command, tmp_path / "huge.jsonl")
        assert code in (0, 1) and "internal error" not in err, err


def test_negative_usage_is_counted_not_shown_as_negative_tokens(tmp_path, capsys):
    log = write(tmp_path / "neg.jsonl", CLAUDE.replace('"cache_read_input_tokens": 100', '"cache_read_input_tokens": -5000'))
    snapshot = export_json(capsys, log)
    assert snapshot["source"]["diagnostics"]["invalid_numbers"] >= 1
    assert snapshot["window"]["reported_tokens"] is None or snapshot["window"]["reported_tokens"] >= 0
    code, out, _ = run(capsys, "export", log, "--format", "md")
    assert code == 0 and "-5,000" not in out and "invalid numbers" in out
    session = Session.open(log)
    assert all(e.usage is None or e.usage.prompt_tokens >= 0 for e in session.parser.entries)


@pytest.mark.parametrize("value", ["true", "false", "-5", "1.5", '"400000"'])
def test_a_window_limit_that_is_no_count_is_not_the_limit(tmp_path, capsys, value):
    log = write(tmp_path / "window.jsonl", CODEX.replace('"model_context_window": 258400', f'"model_context_window": {value}'))
    snapshot = export_json(capsys, log)
    assert snapshot["window"]["limit"] > 1000  # the model's own window, not 1 or 0
    if value in ("true", "false", "-5", "1.5"):
        assert snapshot["source"]["diagnostics"]["invalid_numbers"] >= 1


@pytest.mark.parametrize("amount, shown", [(HUGE, "1.18059e+21"), ("9" * 400, "1.79769e+308"), ("9" * 5000, "1.79769e+308"), ("-" + "9" * 400, None)],
                         ids=["2^70", "400 digits", "5000 digits", "-400 digits"])
def test_a_huge_amount_under_a_cap_rule_is_judged_not_an_internal_error(tmp_path, capsys, amount, shown):
    rule = "Budget cap 500 USD: never spend more without asking."
    text = CLAUDE.replace("Never push to main. The budget is 500 USD.", rule)
    log = write(tmp_path / "cap.jsonl", text.replace('"input": {"command": "ls"}', '"input": {"command": "pay", "amount": %s}' % amount))
    code, out, err = run(capsys, "check", log, "--pin", rule)
    assert "internal error" not in err, err
    if shown:  # beyond 64 bits, and beyond a float's range (saturated): still over the cap
        assert code == 1 and f"amount {shown} exceeds the cap 500" in out
    else:  # negative is under any cap
        assert "exceeds the cap" not in out
    code, out, err = run(capsys, "check", log, "--json", "--pin", rule)
    assert "internal error" not in err, err
    json.loads(out)


# --- 10, 11: text and structure --------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["export"], ["export", "--format", "md"], ["export", "--format", "html"], ["check", "--json"],
                                  ["check"], ["preview", "--json"]])
def test_a_lone_surrogate_becomes_a_replacement_character(tmp_path, capsys, argv):
    log = tmp_path / "surrogate.jsonl"
    log.write_text(CLAUDE.replace("Never push to main.", "Never push to main. \\ud800 and \\udc00 \\ud83d\\ude00"))
    code, out, err = run(capsys, *argv, log)
    assert code in (0, 1) and "internal error" not in err, err
    assert "\ufffd" in out or argv[0] == "preview" or argv == ["check"]
    if argv[0] == "export" and len(argv) == 1:
        assert "\ufffd and \ufffd 😀" in out  # in the rule auto-detected from the message


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_DEPTH + 5, 1000, 100_000])
def test_deep_nesting_inside_a_valid_record_is_a_counted_malformed_line(tmp_path, capsys, depth):
    log = write(tmp_path / "deep.jsonl", CLAUDE.replace('"input": {"command": "ls"}', '"input": {"command": "ls", "x": %s}' % deep(depth)))
    snapshot = export_json(capsys, log)
    assert snapshot["source"]["diagnostics"]["malformed_lines"] >= 3  # the fixture's own two, and this one
    assert snapshot["source"]["messages"] > 0
    code, _, err = run(capsys, "check", log)
    assert code in (0, 1) and "internal error" not in err, err


def test_nesting_within_the_limit_is_read(tmp_path, capsys):
    log = write(tmp_path / "ok.jsonl", CLAUDE.replace('"input": {"command": "ls"}', '"input": {"command": "ls", "x": %s}' % deep(50)))
    snapshot = export_json(capsys, log)
    assert snapshot["source"]["diagnostics"]["malformed_lines"] == export_json(capsys, DATA / "claude_compact.jsonl")["source"]["diagnostics"]["malformed_lines"]


def test_deep_nesting_in_an_opencode_database_data_column(tmp_path, capsys):
    from ..parsers.test_formats import opencode_database

    db = tmp_path / "opencode.db"
    opencode_database(db)
    with sqlite3.connect(db) as connection:
        connection.execute("update part set data = ? where rowid = (select min(rowid) from part)", ('{"x": %s}' % deep(5000),))
    connection.close()
    code, out, err = run(capsys, "export", db)
    assert code == 0 and "internal error" not in err, err
    assert json.loads(out)["source"]["messages"] > 0


def test_deep_nesting_in_a_pins_file_is_a_one_line_error(tmp_path, capsys):
    pins = write(tmp_path / "pins.toml", "x = " + deep(5000) + "\n")
    code, _, err = run(capsys, "check", DATA / "claude_compact.jsonl", "--pins", pins)
    assert_one_line_error(code, err)


# --- 12: permissions ----------------------------------------------------------------------------------
def test_an_os_error_anywhere_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    from ctxtop.context import tracker

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "locked"))

    monkeypatch.setattr(tracker.Tracker, "open", classmethod(lambda cls, *a, **k: refuse()))
    code, _, err = run(capsys, "export", DATA / "claude_compact.jsonl")
    assert_one_line_error(code, err)
    assert "Permission denied" in err and "locked" in err


def test_a_folder_that_cannot_be_entered_is_skipped_when_finding_the_newest_session(tmp_path, monkeypatch):
    (tmp_path / "locked").mkdir()
    write(tmp_path / "locked" / "hidden.jsonl", CLAUDE)
    write(tmp_path / "open.jsonl", CLAUDE)
    real_stat = Path.stat

    def stat_refusing(path, *args, **kwargs):
        if "locked" in str(path) and path.name != "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat_refusing)
    assert newest_session(tmp_path) == tmp_path / "open.jsonl"


def as_a_user_who_cannot_enter(calls):
    """Run ``calls`` (argv lists for main) as a user without root's right to enter any folder: as
    ourselves when not root, else in a forked child that drops to nobody (modules are loaded already).
    Returns [(exit code, stderr)]."""
    def run_all():
        results = []
        for argv in calls:
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = main([str(a) for a in argv])
            results.append((code, err.getvalue()))
        return results

    if os.geteuid() != 0:
        return run_all()
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.setgid(65534)
            os.setuid(65534)
            os.write(writing, json.dumps(run_all()).encode())
        finally:
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return [tuple(r) for r in json.loads(data)]


@pytest.fixture
def open_folder():
    """A folder every user can reach (pytest's tmp_path is below a folder of root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="ctxtop-hostile-"))
    folder.chmod(0o755)
    yield folder
    for path in folder.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder)


def test_a_log_below_a_folder_that_cannot_be_entered(open_folder):
    tmp_path = open_folder
    locked, readable = tmp_path / "locked", tmp_path / "readable"
    (locked / "sub").mkdir(parents=True)
    (readable / "unreadable").mkdir(parents=True)
    write(locked / "sub" / "s.jsonl", CLAUDE)
    write(readable / "s.jsonl", CLAUDE)
    write(readable / "unreadable" / "newer.jsonl", CLAUDE)
    locked.chmod(0o700)
    (readable / "unreadable").chmod(0)
    readable.chmod(0o777)
    try:
        results = as_a_user_who_cannot_enter([
            ["export", locked / "sub" / "s.jsonl"],
            ["check", locked / "sub" / "s.jsonl"],
            ["export", "--format", "md", readable / "s.jsonl", "-o", locked / "out.md"],
            ["export", readable / "s.jsonl"],
        ])
    finally:
        locked.chmod(0o755)
        (readable / "unreadable").chmod(0o755)
    for code, err in results[:3]:
        assert_one_line_error(code, err)
        assert "Permission denied" in err
    assert results[3][0] == 0, results[3]


# --- 13: CLI integers -----------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["export", "--demo", "--window", HUGE],
    ["export", "--demo", "--at", HUGE],
    ["export", "--demo", "--at", "-" + HUGE],
    ["export", "--demo", "--compaction", HUGE],
    ["preview", "--demo", "--budget", HUGE],
    ["preview", "--demo", "--strategy", f"clear_tool_results:keep={HUGE}"],
    ["preview", "--demo", "--strategy", "clear_tool_results:keep=infk"],
    ["replay-compaction", "--demo", "--compaction", HUGE, "--summarizer", "cat"],
    ["replay-compaction", "--demo", "--compaction", "1", "--summarizer", "cat", "--summarizer-timeout", "inf"],
    ["watch", "--demo", "--poll", "nan"],
    ["watch", "--demo", "--poll", "1e-9"],  # a busy loop, not a poll
    ["watch", "--demo", "--poll", "0.001"],
    ["export", "--demo", "--window", "9" * 5000],
])
def test_cli_integers_beyond_any_window_are_usage_errors(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert_one_line_error(code, err)


# --- 28 (and issue 20): outputs -----------------------------------------------------------------------
@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_exports_get_the_users_normal_file_mode(tmp_path, capsys, umask, expected):
    old = os.umask(umask)
    try:
        code, _, err = run(capsys, "export", "--demo", "-o", tmp_path / "out.json")
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == expected


def test_replacing_an_export_keeps_its_mode(tmp_path, capsys):
    target = write(tmp_path / "out.md", "old\n")
    target.chmod(0o640)
    code, _, err = run(capsys, "export", "--demo", "--format", "md", "-o", target)
    assert code == 0, err
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text().startswith("## ctxtop snapshot")


def test_output_to_a_symlink_writes_its_target_and_keeps_the_link(tmp_path, capsys):
    target = write(tmp_path / "real.json", "")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    code, _, err = run(capsys, "export", "--demo", "-o", link)
    assert code == 0, err
    assert link.is_symlink() and json.loads(target.read_text())["schema"].startswith("ctxtop.snapshot")


def test_output_to_a_fifo_writes_through_it(tmp_path, capsys):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = run(capsys, "export", "--demo", "-o", fifo)
    reader.join(10)
    assert code == 0, err
    assert stat.S_ISFIFO(fifo.lstat().st_mode), "the FIFO is still a FIFO"
    assert json.loads(received[0])["schema"].startswith("ctxtop.snapshot")
    assert [p.name for p in tmp_path.iterdir()] == ["out.fifo"]  # no temporary file left beside it


def test_output_to_a_character_device_writes_through_it(tmp_path, capsys):
    # A pseudo-terminal, not /dev/null: were the device replaced, no real one would be harmed.
    controller, terminal = os.openpty()
    try:
        device = os.ttyname(terminal)
        before = os.stat(device)
        code, _, err = run(capsys, "formats")
        assert code == 0
        code, _, err = run(capsys, "export", "--demo", "--format", "md", "-o", device)
        assert code == 0, err
        after = os.stat(device)
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
        os.set_blocking(controller, False)
        assert b"ctxtop snapshot" in os.read(controller, 1 << 16)
    finally:
        os.close(controller)
        os.close(terminal)


def test_output_to_a_folder_is_one_line(tmp_path, capsys):
    code, _, err = run(capsys, "export", "--demo", "-o", tmp_path)
    assert_one_line_error(code, err)


# --- 29: pins with DEL ------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["Never use \x7f here", "C1 \x85\x9b and bidi \u202e", 'quotes " and \\ backslash \n newline',
                                  "a lone \ud800 surrogate", "NUL \x00 and ESC \x1b"])
def test_any_pinned_text_round_trips_through_the_pins_file(tmp_path, text):
    log = write(tmp_path / "s.jsonl", CLAUDE)
    save_session_pins(log, SavedPins(["first rule", text], hidden=["id-\x7f"]))
    saved, warning = load_session_pins(log)
    assert warning is None
    assert saved.texts == ["first rule", text.replace("\ud800", "\ufffd")] and saved.hidden == ["id-\x7f"]


def test_a_log_path_with_del_does_not_break_its_pins_file(tmp_path):
    log = write(tmp_path / "odd\x7fname.jsonl", CLAUDE)
    save_session_pins(log, SavedPins(["keep me"]))
    assert load_session_pins(log) == (SavedPins(["keep me"], []), None)


# --- 8, 30, 31 in every format that reports usage ----------------------------------------------------
@pytest.mark.parametrize("source, field", [
    ("gemini_chat.jsonl", '"input":5200'),
    ("openhands_condensation.json", '"prompt_tokens": 1200'),
    ("inspect_compaction.json", '"input_tokens": 650'),
    ("opencode_storage", '"input":50'),
    ("opencode_storage", '"input":20'),  # the first call after a compaction: its prompt size is the compaction's post_tokens
])
@pytest.mark.parametrize("bad", ["-7", HUGE, "true", "1.5"])
def test_a_bad_usage_number_is_counted_in_every_format(tmp_path, source, field, bad):
    original = DATA / source
    if original.is_dir():
        copy = tmp_path / source
        shutil.copytree(original, copy)
        files = [p for p in copy.rglob("*.json") if field in p.read_text()]
    else:
        copy = tmp_path / source
        shutil.copy(original, copy)
        files = [copy]
    assert files, f"{field} is not in {source}"
    for path in files:
        path.write_text(path.read_text().replace(field, field.split(":")[0] + ":" + bad, 1))
    session = Session.open(copy)
    assert session.parser.diagnostics.invalid_numbers >= 1
    for entry in session.parser.entries:
        if entry.usage is not None:
            assert type(entry.usage.prompt_tokens) is int and 0 <= entry.usage.prompt_tokens < 2**53
        if entry.compaction is not None:
            assert entry.compaction.post_tokens is None or type(entry.compaction.post_tokens) is int
    build_snapshot(session)  # the window replayed, and its numbers written out


def test_a_pins_file_that_is_a_folder_is_said_to_be_one(tmp_path, capsys):
    # `--pins /tmp` said "not a regular file (a FIFO, socket or device cannot be read)": a folder is none of those.
    code, _, err = run(capsys, "check", "--demo", "--pins", tmp_path)
    assert_one_line_error(code, err)
    assert "is a directory" in err and "FIFO" not in err
