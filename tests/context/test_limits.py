"""Hangs and memory (issue 18, items 14–18): FIFOs and devices where files are expected, catastrophic
forbid regexes, a huge line without break points, zip bombs.

Commands that used to hang run as real processes with a generous ceiling: a hang is infinite, so a
ceiling of minutes tells a fix from a regression without timing anything that can flake.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import DATA as DATA_DIR
from ..conftest import SHARED_FIXTURES

HANG_CEILING = 180  # seconds; the commands below finish in a few on a loaded machine
DEMO_LINES = demo_path().read_bytes().splitlines(keepends=True)
SESSION_ID = json.loads(DEMO_LINES[0])["sessionId"]


def ctxtop(*argv: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxtop", *argv], capture_output=True, text=True,
                          timeout=HANG_CEILING, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def session_with_a_fifo_beside_it(tmp_path):
    log = tmp_path / f"{SESSION_ID}.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:40]))
    os.mkfifo(tmp_path / "agent-x.jsonl")
    return log


@pytest.mark.parametrize("command", [["export"], ["check"], ["preview"]], ids=" ".join)
def test_a_fifo_named_like_a_sub_agent_transcript_is_skipped_not_opened(tmp_path, command):
    log = session_with_a_fifo_beside_it(tmp_path)
    result = ctxtop(*command, str(log), "--window", str(DEMO_WINDOW))
    assert result.returncode in (0, 1), result.stderr
    if command == ["export"]:
        assert json.loads(result.stdout)["subagents"]["files"] == 0


def test_a_fifo_beside_a_followed_session_does_not_block_its_updates(tmp_path):
    from ctxtop.context.window.follow import LogFollower

    log = session_with_a_fifo_beside_it(tmp_path)
    # In this process: were the FIFO opened, the open would block here (no writer ever comes).
    follower = LogFollower(log, window=DEMO_WINDOW)
    with open(log, "ab") as handle:
        handle.writelines(DEMO_LINES[40:45])
    assert follower.poll().new > 0


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_pins_from_a_fifo_or_a_device_are_a_one_line_error(tmp_path, target):
    if target == "fifo":
        target = str(tmp_path / "pins.toml")
        os.mkfifo(target)
    result = ctxtop("check", str(demo_path()), "--pins", target)
    assert result.returncode == 2
    assert result.stderr.startswith("ctxtop: error: ") and result.stderr.count("\n") == 1
    assert "not a regular file" in result.stderr


def test_a_pins_file_bigger_than_any_pins_file_is_refused_without_reading_it_all(tmp_path):
    from ctxtop.context.rules.pins import MAX_PINS_BYTES, PinsError, load_pins

    big = tmp_path / "pins.toml"
    with open(big, "wb") as handle:
        handle.truncate(MAX_PINS_BYTES * 8)  # sparse: costs no disk
    with pytest.raises(PinsError, match="not a pins file"):
        load_pins(big)


def tool_call_line(number: int, name: str, arguments: dict) -> bytes:
    template = json.loads(next(line for line in DEMO_LINES if b'"tool_use"' in line))
    template["uuid"] = f"00000000-0000-4000-8000-9{number:011d}"
    template["message"]["id"] = f"msg_limits{number:06d}"
    template["message"]["content"] = [{"type": "tool_use", "id": f"toolu_limits{number:06d}", "name": name, "input": arguments}]
    return json.dumps(template).encode() + b"\n"


def test_a_catastrophic_forbid_regex_is_cut_off_and_the_skipped_pin_named(tmp_path):
    # Issue 18, item 16: `(a+)+$` against a long run of `a` never finished with Python's re.
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:6]) + tool_call_line(1, "query", {"q": "a" * 20_000 + "!"})
                    + tool_call_line(2, "query", {"q": "a" * 30_000 + "!"}) + tool_call_line(3, "send_email", {"to": "x"}))
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "slow"\ntext = "keep queries short"\nforbid = ["(a+)+$"]\n\n'
                    '[[pin]]\nid = "wecom"\ntext = "notify only on WeCom"\nforbid = ["send_email"]\n')
    result = ctxtop("check", str(log), "--pins", str(pins), "--json")
    assert result.returncode == 1, result.stderr  # the other pin's violation is still found
    report = json.loads(result.stdout)
    skipped = [n for n in report["notes"] if n["kind"] == "forbid_skipped"]
    assert [(n["constraint"], n["message"]) for n in skipped] == [("slow", 7)]  # once, where it ran out
    assert "(a+)+$" in skipped[0]["detail"] and "not checked here or after" in skipped[0]["detail"]
    violations = [(f["constraint"], f["message"]) for f in report["findings"] if f["kind"] == "violation"]
    assert violations == [("wecom", 9)]


def test_a_pattern_that_ran_out_of_time_is_not_searched_again_and_keeps_its_note(monkeypatch):
    from ctxtop.context.audit import violations
    from ctxtop.context.rules import forbid
    from ctxtop.context.rules.constraints import make_constraint
    from ctxtop.parsers.model import TOOL_CALL, Block, Entry

    monkeypatch.setattr(forbid, "SEARCH_SECONDS", 0.01)
    forbid.forbid_pattern.cache_clear()
    rule = make_constraint("keep queries short", "pin", id="slow", forbid=["(a|aa)+$"])
    rule.first_stated = 0
    calls = [Entry(i, "assistant", [Block(TOOL_CALL, "a" * 3000 + "!", tool_name="query")], 0, 0) for i in (1, 2, 3)]
    pattern = forbid.forbid_pattern("(a|aa)+$")
    searched = []

    class Counting:
        def __init__(self, compiled):
            self.compiled = compiled

        def search(self, text, **options):
            searched.append(text[:5])
            return self.compiled.search(text, **options)

    pattern._compiled = Counting(pattern._compiled)
    first = violations.violations(calls, [rule])
    again = violations.violations(calls, [rule])  # a re-audit (a pin added, a live update)
    assert [(a.kind.key, a.message) for a in first] == [(a.kind.key, a.message) for a in again] == [("forbid_skipped", 1)]
    assert pattern.timed_out_at == 1
    assert searched == ["query", "aaaaa"]  # the first call's name and input; nothing after it ran out
    forbid.forbid_pattern.cache_clear()


def test_a_pattern_that_ran_out_of_time_is_noted_once_among_the_calls_of_one_message(monkeypatch):
    """A reply may make several calls; the pattern ran out of time on one of them, and the others were
    not searched: one note, at that call (there were five, each saying it took longer than 1 s)."""
    from ctxtop.context.audit import violations
    from ctxtop.context.rules import forbid
    from ctxtop.context.rules.constraints import make_constraint
    from ctxtop.parsers.model import TOOL_CALL, Block, Entry

    monkeypatch.setattr(forbid, "SEARCH_SECONDS", 0.01)
    forbid.forbid_pattern.cache_clear()
    rule = make_constraint("keep globs short", "pin", id="slow", forbid=["(a|aa)+$"])
    rule.first_stated = 0
    reply = Entry(1, "assistant", [Block(TOOL_CALL, "a" * 3000 + "!" * n, tool_name="Glob", tool_id=f"call-{n}") for n in range(1, 6)], 0, 0)
    for _ in range(2):  # and again, as a re-audit does
        notes = violations.violations([reply], [rule])
        assert [(a.kind.key, a.message) for a in notes] == [("forbid_skipped", 1)]
    forbid.forbid_pattern.cache_clear()


def eval_archive(path, sample: bytes) -> None:
    import zipfile

    header = json.loads((DATA_DIR / "inspect_compaction.json").read_text())
    header.pop("samples", None)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("samples/1_epoch_1.json", sample)


def test_an_eval_zip_bomb_is_refused_with_the_limit_it_broke(tmp_path):
    # Issue 18, item 18: a 1 MB .eval took 2.1 GB; 4 MB ran out of memory.
    from ctxtop.parsers import inspect_ai

    bomb = tmp_path / "bomb.eval"
    # 200 MB of one byte deflates to about 200 KB: 1,000 times smaller.
    eval_archive(bomb, b'{"messages": [], "pad": "' + b" " * (200 << 20) + b'"}')
    assert bomb.stat().st_size < 1 << 20
    result = ctxtop("export", str(bomb))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "samples/1_epoch_1.json in the archive decompresses to more than" in result.stderr and "zip bomb" in result.stderr
    # What a member may inflate to: 100 times its compressed size, within 16 MB and 1 GB.
    assert inspect_ai.member_limit(1 << 20) == 100 << 20 and inspect_ai.member_limit(1) == inspect_ai.MIN_MEMBER_LIMIT
    assert inspect_ai.member_limit(1 << 40) == inspect_ai.MAX_MEMBER_BYTES


def test_a_real_eval_log_is_far_within_the_limits():
    from ctxtop.context.window.session import Session

    real = SHARED_FIXTURES / "inspect-ai" / "log_read_sample.eval"
    if not real.exists():
        pytest.skip(f"{real} is not here")
    assert Session.open(real).message_count > 0
