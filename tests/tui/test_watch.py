"""`ctxtop watch` as a real process, while another writes the log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from unittest.mock import ANY

from ctxtop.tui.demo import demo_path

from ..context.test_lazy_text import generate

DEMO_LINES = demo_path().read_bytes().splitlines(keepends=True)


def read_line(proc, timeout=20.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            return json.loads(line)
    raise AssertionError("ctxtop watch printed nothing")


def test_watch_prints_updates_and_the_live_compaction_alert_then_exits_2_when_the_file_goes(tmp_path):
    log = tmp_path / "live.jsonl"
    cut = next(i for i, line in enumerate(DEMO_LINES) if b"compact_boundary" in line)
    log.write_bytes(b"".join(DEMO_LINES[:cut]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxtop", "watch", str(log), "--json", "--window", "8000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        first = read_line(proc)
        assert first["type"] == "update" and first["messages"] == 203 and first["limit"] == 8000
        # The estimates beyond the counted text, as the snapshot splits them (the demo's first call: 1,175).
        assert first["inferred_system_tools"] == 1175
        assert first["inferred_system_tools"] + first["unattributed"] == first["reported_tokens"] - first["estimated_tokens"]
        with open(log, "ab") as handle:
            handle.writelines(DEMO_LINES[cut : cut + 4])
        records = [read_line(proc)]
        wanted = {"constraint_paraphrased", "constraint_lost"}
        while not wanted <= {r.get("kind") for r in records}:
            records.append(read_line(proc))
        update = records[0]
        assert update["type"] == "update" and update["messages"] > 203 and update["new"] > 0
        alerts = [r for r in records if r["type"] == "alert"]
        assert {"constraint_paraphrased", "constraint_lost"} <= {a["kind"] for a in alerts}
        assert all(a["message"] == 204 and a["failing"] for a in alerts)
        log.unlink()
        assert proc.wait(timeout=20) == 2
        assert "disappeared" in proc.stderr.read()
    finally:
        proc.kill()


def test_watch_polls_when_asked_and_ends_cleanly_on_ctrl_c(tmp_path):
    import signal

    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:30]))
    # Ctrl-C as a terminal sends it: a shell without job control starts its background commands
    # (and so this test run, and ctxtop) with SIGINT ignored, which Python keeps; the child puts
    # the default back before it runs `python -m ctxtop watch`.
    run_as_from_a_terminal = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                              "sys.argv[0] = 'ctxtop'; runpy.run_module('ctxtop', run_name='__main__', alter_sys=True)")
    proc = subprocess.Popen(
        [sys.executable, "-c", run_as_from_a_terminal, "watch", str(log), "--poll", "0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("msg ") and "/ 200,000" in first
        with open(log, "ab") as handle:
            handle.writelines(DEMO_LINES[30:40])
        second = proc.stdout.readline()
        assert second.startswith("msg ") and " +" in second and not second.startswith(first.split(":")[0] + ":")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        proc.kill()


def test_watch_goes_on_through_truncation_and_rename_rotation(tmp_path):
    # Issue 18, items 19–21: emptied, written again, renamed away and replaced 50 ms later.
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:30]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxtop", "watch", str(log), "--json", "--window", "8000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert read_line(proc)["messages"] == 30
        with open(log, "r+b") as handle:
            handle.truncate(0)
        emptied = read_line(proc)
        assert emptied["messages"] == 0 and "truncated" in emptied["reset"]
        with open(log, "ab") as handle:
            handle.writelines(DEMO_LINES[:10])
        while read_line(proc)["messages"] != 10:  # the lines may be seen before all of them are written
            pass
        os.rename(log, tmp_path / "live.jsonl.1")
        time.sleep(0.05)
        log.write_bytes(b"".join(DEMO_LINES[:20]))
        record = read_line(proc)
        while record["messages"] != 20:  # the new file may be seen before all of it is written
            record = read_line(proc)
        assert proc.poll() is None  # still following
    finally:
        proc.kill()
        stderr = proc.stderr.read()
    assert "Traceback" not in stderr and "error" not in stderr


def test_watch_prints_its_first_line_from_the_tail_of_a_big_log_before_reading_the_history(tmp_path, monkeypatch, capsys):
    # A big log (here: any size, by lowering the threshold) gets a first line at once, from the window
    # after its last compaction; the full reading follows and speaks for the whole session.
    from ctxtop.tui import watch
    from ctxtop.tui.watch import first_line_from_the_tail

    monkeypatch.setattr(watch, "WATCH_TAIL_BYTES", 0)
    log = tmp_path / "big.jsonl"
    log.write_bytes(b"".join(DEMO_LINES))
    first_line_from_the_tail(str(log), encoding="cl100k_base", window=8000, as_json=True, redacted=False)
    record = json.loads(capsys.readouterr().out)
    last_boundary = max(i for i, line in enumerate(DEMO_LINES) if b"compact_boundary" in line)
    assert record["from_tail"] and record["messages"] == len(DEMO_LINES) - last_boundary
    assert record["reported_tokens"] == 1502 and record["limit"] == 8000  # the log's last usage, as the full read finds it


def test_watch_starts_from_the_tail_of_a_log_well_below_the_tuis_first_paint_threshold(tmp_path, capsys):
    # A 30 MB Codex rollout took 5 s to its first line, read, audited and all: from the tail it is at once.
    from ctxtop.context.window import tail_first
    from ctxtop.tui.watch import WATCH_TAIL_BYTES, first_line_from_the_tail

    log = tmp_path / "rollout.jsonl"
    generate(log, "codex", WATCH_TAIL_BYTES / 1e6 + 1)
    assert log.stat().st_size < tail_first.TAIL_FIRST_BYTES
    first_line_from_the_tail(str(log), encoding="cl100k_base", window=None, as_json=True, redacted=False)
    assert json.loads(capsys.readouterr().out)["from_tail"] is True


def test_watch_on_a_log_it_cannot_read_is_one_line_and_exit_2(tmp_path):
    junk, fifo = tmp_path / "junk.jsonl", tmp_path / "fifo.jsonl"
    junk.write_bytes(b"\0" * 200)
    os.mkfifo(fifo)
    for path, message in ((junk, "not a session log ctxtop knows"), (fifo, "not a regular file")):
        done = subprocess.run([sys.executable, "-m", "ctxtop", "watch", str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"ctxtop: error: {path}: {message}")


def _watch(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ctxtop", "watch", *args, "--json", "--poll", "0.1", "--window", "8000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_watch_on_a_folder_follows_a_newer_session_there_unless_told_to_stay(tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_bytes(b"".join(DEMO_LINES[:40]))
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    following, staying = _watch(str(tmp_path)), _watch(str(tmp_path), "--stay")
    try:
        for watch in (following, staying):  # first, which session the records are of: the folder does not say
            assert read_line(watch) == {"type": "session", "time": ANY, "path": str(old)}
            assert read_line(watch)["messages"] == 40
        (tmp_path / "subagents").mkdir()  # a sub-agent's transcript is its session's, never followed instead
        (tmp_path / "subagents" / "agent-a1.jsonl").write_bytes(b"".join(DEMO_LINES[:5]))
        (tmp_path / "agent-a2.jsonl").write_bytes(b"".join(DEMO_LINES[:5]))  # nor one beside it (Claude Code 2.0.x)
        newer = tmp_path / "newer.jsonl"
        newer.write_bytes(b"")  # created empty first: switched to once it has its first line
        time.sleep(0.5)
        newer.write_bytes(b"".join(DEMO_LINES[:90]))
        switch = read_line(following)
        assert switch["type"] == "session" and switch["path"] == str(newer)
        assert read_line(following)["messages"] == 90
        with open(old, "ab") as handle:  # the one staying still follows the first
            handle.write(b"".join(DEMO_LINES[40:45]))
        assert read_line(staying)["messages"] == 45
    finally:
        following.kill()
        staying.kill()
    assert "switched to the newer session newer.jsonl" in following.stderr.read()
    assert "staying, as --stay asks" in staying.stderr.read()


def test_watch_waits_for_a_folder_that_does_not_exist_yet_or_holds_no_session(tmp_path):
    later = tmp_path / "project"
    proc = _watch(str(later))
    try:
        time.sleep(0.5)
        assert proc.poll() is None
        building = tmp_path / "building"
        building.mkdir()
        (building / "a.jsonl").write_bytes(b"".join(DEMO_LINES[:30]))
        building.rename(later)  # the folder appears with its session in it
        assert read_line(proc) == {"type": "session", "time": ANY, "path": str(later / "a.jsonl")}
        assert read_line(proc)["messages"] == 30
    finally:
        proc.kill()
    assert "newest session in" in proc.stderr.read()


def test_watch_prints_nothing_for_an_update_that_changes_nothing_shown(tmp_path):
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:30]))
    proc = _watch(str(log))
    try:
        assert read_line(proc)["messages"] == 30
        with open(log, "ab") as handle:  # half a line, then a record the model is never sent
            handle.write(DEMO_LINES[30][:20])
            handle.flush()
            time.sleep(0.4)
            handle.write(DEMO_LINES[30][20:] + b'{"type":"file-history-snapshot","messageId":"x","snapshot":{}}\n')
            handle.flush()
            time.sleep(0.4)
            handle.write(DEMO_LINES[31])
        assert read_line(proc)["messages"] == 31
        assert read_line(proc)["messages"] == 32
    finally:
        proc.kill()


def test_watch_prints_nothing_for_half_a_line_after_the_log_was_read_again(tmp_path):
    # After a line saying why the log was read again ("[the file was replaced; …]"), half a line appended
    # printed the same figures again, only without that note: the note is the update's, not the state's.
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:30]))
    proc = _watch(str(log))
    try:
        assert read_line(proc)["messages"] == 30
        replacement = tmp_path / "new.jsonl"
        replacement.write_bytes(b"".join(DEMO_LINES[:20]))
        os.replace(replacement, log)
        replaced = read_line(proc)
        assert replaced["messages"] == 20 and "replaced" in replaced["reset"]
        with open(log, "ab") as handle:
            handle.write(DEMO_LINES[20][:20])
            handle.flush()
            time.sleep(0.4)
            handle.write(DEMO_LINES[20][20:])
        record = read_line(proc)
        assert (record["messages"], record["new"], record["reset"]) == (21, 1, None)
    finally:
        proc.kill()


def test_watch_on_a_folder_passes_over_a_symlink_loop_and_a_file_that_is_no_session(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_bytes(b"".join(DEMO_LINES[:30]))
    proc = _watch(str(tmp_path))
    try:
        assert read_line(proc)["type"] == "session" and read_line(proc)["messages"] == 30
        (tmp_path / "loop2.jsonl").symlink_to(tmp_path / "loop1.jsonl")
        (tmp_path / "loop1.jsonl").symlink_to(tmp_path / "loop2.jsonl")
        (tmp_path / "settings.json").write_text('{"theme": "dark"}')
        time.sleep(1.5)
        assert proc.poll() is None  # (a symlink loop was an internal error, exit 2)
        with open(log, "ab") as handle:
            handle.write(DEMO_LINES[30])
        assert read_line(proc)["messages"] == 31  # still the session it followed
    finally:
        proc.kill()
