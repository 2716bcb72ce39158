"""Start before the agent writes: the TUI and `watch` wait for a log that is missing or empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from textual.widgets import Static

from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.cli import main
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.waiting import not_written_yet

from ..conftest import DATA
from .test_app import SIZE, plain, settle, until

DEMO_LINES = demo_path().read_bytes().splitlines(keepends=True)


async def test_the_tui_waits_for_a_missing_log_then_shows_it(tmp_path):
    log = tmp_path / "later" / "session.jsonl"
    app = CtxtopApp(str(log), window=DEMO_WINDOW, poll_seconds=0.05)
    async with app.run_test(size=SIZE) as pilot:
        header = app.query_one("#header", Static)
        assert await until(pilot, lambda: "waiting for session.jsonl" in plain(header))
        for key in "pUu":  # the rule keys say there is nothing to change yet (they once failed on the missing session)
            await pilot.press(key)
        await pilot.pause(0.1)
        assert app.return_code is None and app.is_running
        assert [n.message for n in app._notifications][-3:] == ["no session yet: rules can be pinned or unpinned once the log is read"] * 3
        log.parent.mkdir()
        log.write_bytes(b"")  # created empty first, as an agent opening its log does
        await pilot.pause(0.3)
        assert "waiting for" in plain(header)
        log.write_bytes(b"".join(DEMO_LINES[:40]))
        await settle(pilot, app, 40)
        assert app.session is not None and app.session.message_count == 40


async def test_the_tui_on_a_folder_with_no_session_yet_waits_for_one_then_follows_newer_ones(tmp_path):
    app = CtxtopApp(str(tmp_path), window=DEMO_WINDOW, poll_seconds=0.05, session_dirs=[tmp_path])
    async with app.run_test(size=SIZE) as pilot:
        header = app.query_one("#header", Static)
        assert await until(pilot, lambda: f"waiting for a session in {tmp_path.name}" in plain(header))
        (tmp_path / "first.jsonl").write_bytes(b"".join(DEMO_LINES[:40]))
        await settle(pilot, app, 40)
        assert app.path == str(tmp_path / "first.jsonl")
        (tmp_path / "second.jsonl").write_bytes(b"".join(DEMO_LINES[:60]))
        assert await until(pilot, lambda: app.path == str(tmp_path / "second.jsonl") and app.session is not None
                           and app.session.message_count == 60)


def test_watch_waits_for_an_empty_log_then_follows_it(tmp_path):
    log = tmp_path / "session.jsonl"
    log.touch()
    proc = subprocess.Popen([sys.executable, "-m", "ctxtop", "watch", str(log), "--json", "--poll", "0.1", "--window", str(DEMO_WINDOW)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert "waiting for" in proc.stderr.readline()
        time.sleep(0.5)
        assert proc.poll() is None  # still waiting, not "the file is empty" and exit 2
        log.write_bytes(b"".join(DEMO_LINES[:30]))
        first = json.loads(proc.stdout.readline())
        assert first["type"] == "update" and first["messages"] == 30
    finally:
        proc.kill()


def test_watch_waits_for_a_first_line_written_in_two_halves(tmp_path):
    # The agent's first write may end in the middle of its first line: nothing yet tells the format,
    # and it used to be refused ("not a session log ctxtop knows", exit 2).
    log = tmp_path / "session.jsonl"
    log.write_bytes(DEMO_LINES[0][:60])
    proc = subprocess.Popen([sys.executable, "-m", "ctxtop", "watch", str(log), "--json", "--poll", "0.1", "--window", str(DEMO_WINDOW)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert "waiting for" in proc.stderr.readline()
        time.sleep(0.5)
        assert proc.poll() is None
        with open(log, "ab") as handle:
            handle.write(b"".join([DEMO_LINES[0][60:], *DEMO_LINES[1:30]]))
        first = json.loads(proc.stdout.readline())
        assert first["type"] == "update" and first["messages"] == 30
    finally:
        proc.kill()


def test_a_whole_json_document_without_a_newline_is_not_waited_for(tmp_path):
    document = tmp_path / "chat.json"
    document.write_bytes(b'{"messages": []}')
    assert not not_written_yet(document)
    half = tmp_path / "half.jsonl"
    half.write_bytes(b'{"type": "user", "mess')
    assert not_written_yet(half)
    nul = tmp_path / "nul.jsonl"
    nul.write_bytes(b"\0" * 200)  # no log at all: refused, not waited for
    assert not not_written_yet(nul)
    nul.write_bytes(b"{" + b"\0" * 20)  # nor a brace and NUL bytes (JSON text holds none): it waited for ever
    assert not not_written_yet(nul)


def test_export_and_check_still_refuse_a_missing_or_empty_file(capsys, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert main(["export", str(empty)]) == 2 and "the file is empty" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "missing.jsonl")]) == 2 and "no such file" in capsys.readouterr().err


def test_a_pretty_printed_json_document_written_in_two_halves_is_waited_for(tmp_path):
    # Gemini CLI writes its chat as an indented JSON document (JSON.stringify(…, null, 2)), so its first
    # write, caught half done, holds newlines: watch and the TUI refused it ("a JSON document that ends
    # before it is complete", exit 2) where a half first line of a JSON Lines log is waited for.
    document = json.loads((DATA / "gemini_chat_document.json").read_bytes())
    text = json.dumps(document, indent=2).encode()
    chat = tmp_path / "session-1.json"
    for cut in (2, 40, len(text) // 2, len(text) - 2):
        chat.write_bytes(text[:cut])
        assert not_written_yet(chat), cut
    chat.write_bytes(text)
    assert not not_written_yet(chat)
    lines = tmp_path / "session.jsonl"
    lines.write_bytes(b'{"type": "user"}\n{"type": "assist')  # a whole first line: a log being written, opened
    assert not not_written_yet(lines)
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{\n  "messages": [}\n  "x": 1\n}')  # no document cut short: opened, and its open says why
    assert not not_written_yet(broken)
