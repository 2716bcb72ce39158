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
