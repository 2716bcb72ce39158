"""The one facade (ctxtop.context.tracker): every front end gets the same rules and alerts from it,
live tracking equals the judgement afterwards, and nothing passes vacuously."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ctxtop.context.rules.pin_store import load_session_pins
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.tracker import Tracker
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.cli import main
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import workers_done
from ..tui.test_app import SIZE, settle

DEMO_LINES = demo_path().read_bytes().splitlines(keepends=True)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def keys(alerts: list[dict]) -> list[tuple]:
    return sorted((a["kind"], a["message"], a["constraint"], a["detail"]) for a in alerts)


def check_json(capsys, path: Path) -> dict:
    code, out, _ = run_cli(capsys, "check", str(path), "--json", "--window", str(DEMO_WINDOW))
    report = json.loads(out)
    assert code == (1 if report["findings"] else 0)
    return report


def watch_alerts(proc, wanted: int, quiet: float = 3.0, timeout: float = 90.0) -> list[dict]:
    """The alert records ``ctxtop watch --json`` prints, once it has printed ``wanted`` and then nothing for ``quiet`` s."""
    os.set_blocking(proc.stdout.fileno(), False)
    alerts, buffer, last = [], b"", time.monotonic()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = proc.stdout.read()
        if chunk:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            alerts += [r for r in map(json.loads, lines) if r["type"] == "alert"]
            last = time.monotonic()
        elif len(alerts) >= wanted and time.monotonic() - last > quiet:
            break
        time.sleep(0.05)
    return alerts


def start_watch(log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ctxtop", "watch", str(log), "--json", "--window", str(DEMO_WINDOW), "--poll", "0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})


async def test_the_tui_check_export_and_watch_agree_on_the_demo(capsys, tmp_path):
    log = tmp_path / "demo.jsonl"
    log.write_bytes(demo_path().read_bytes())
    check = check_json(capsys, log)
    rule_ids = [c["id"] for c in check["constraints"]]
    alerts = keys(check["findings"] + check["notes"])
    # The seed incident: 3 rules, 3 lost or weakened at 204 (the budget cap lost at 306 too), 3 broken.
    assert len(rule_ids) == 3 and len(check["findings"]) == 7

    code, out, _ = run_cli(capsys, "export", str(log), "--window", str(DEMO_WINDOW))
    snapshot = json.loads(out)
    assert code == 0 and [c["id"] for c in snapshot["constraints"]] == rule_ids and keys(snapshot["alerts"]) == alerts

    proc = start_watch(log)
    try:
        assert keys(watch_alerts(proc, len(alerts))) == alerts
    finally:
        proc.kill()

    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 390)
        await workers_done(app)
        assert [c.id for c in app.constraints] == rule_ids
        assert keys([a.as_dict() for a in app.tracker.alerts(app.available)]) == alerts


def test_rules_stated_while_watching_are_tracked_as_check_finds_them_afterwards(capsys, tmp_path):
    # ctxtop watch starts when the log holds only its first line; the agent then writes the rest.
    log = tmp_path / "live.jsonl"
    log.write_bytes(DEMO_LINES[0])
    proc = start_watch(log)
    try:
        time.sleep(1.0)
        for start in range(1, len(DEMO_LINES), 25):
            with open(log, "ab") as handle:
                handle.writelines(DEMO_LINES[start : start + 25])
            time.sleep(0.15)
        check = check_json(capsys, log)
        expected = keys(check["findings"] + check["notes"])
        assert len(check["constraints"]) == 3 and len(expected) >= 6
        assert keys(watch_alerts(proc, len(expected))) == expected
    finally:
        proc.kill()


def test_a_compaction_is_judged_when_its_summary_arrives_never_on_the_bare_boundary(tmp_path):
    log = tmp_path / "live.jsonl"
    cut = next(i for i, line in enumerate(DEMO_LINES) if b"compact_boundary" in line)
    log.write_bytes(b"".join(DEMO_LINES[:cut]))
    tracker = Tracker.open(str(log), window=DEMO_WINDOW, live=True)
    tracker.new_alerts()
    with open(log, "ab") as handle:
        handle.write(DEMO_LINES[cut])  # the boundary alone: the summary has not been written yet
    change = tracker.poll()
    assert change is not None and change.update.compaction and not change.alerts
    with open(log, "ab") as handle:
        handle.write(DEMO_LINES[cut + 1])  # the summary
    statuses = {(a.kind.key, a.constraint) for a in tracker.poll().alerts}
    with open(log, "ab") as handle:
        handle.writelines(DEMO_LINES[cut + 2 :])
    tracker.poll()
    final = Tracker.open(str(log), window=DEMO_WINDOW)
    at_204 = {(a.kind.key, a.constraint) for a in final.alerts() if a.compaction == 204}
    assert statuses == at_204 and len(statuses) == 3  # what was said live is never contradicted later


def test_a_compaction_whose_marker_carries_its_summary_is_judged_at_once(tmp_path):
    # Gemini CLI's chat compression ($set of messages) brings its <state_snapshot> summary with the marker:
    # the window after it is there before any model call, so watch (live) must say what check says of the file.
    lines = (Path(__file__).parent.parent / "data" / "gemini_chat.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.startswith(b'{"$set"'))
    log = tmp_path / "session-g.jsonl"
    log.write_bytes(b"".join(lines[:cut]))
    tracker = Tracker.open(str(log), live=True)
    assert not tracker.new_alerts()
    with open(log, "ab") as handle:
        handle.writelines(lines[cut : cut + 2])  # the compression and the user's next message; no call yet
    live = {(a.kind.key, a.message, a.constraint) for a in tracker.poll().alerts}
    finished = Tracker.open(str(log))
    assert live == {(a.kind.key, a.message, a.constraint) for a in finished.alerts()} and len(live) == 2
    # ...and the finished file read at the compaction says what it says at its end (export --at, the Alerts pane)
    marker = finished.audit.compactions[0].event.message
    assert [a.as_dict() for a in finished.alerts(marker)] == [a.as_dict() for a in finished.alerts()]


def test_a_compaction_event_that_is_its_own_summary_is_judged_at_it():
    # An ADK compaction event is the summary itself (one entry, its block a summary): export --at 7 and
    # the Alerts pane there must hold the loss the banner shows from the finished session.
    tracker = Tracker.open(str(Path(__file__).parent.parent / "data" / "adk_session.json"))
    (compaction,) = tracker.audit.compactions
    marker = compaction.event.message
    assert [b.category for b in tracker.session.entries[marker - 1].blocks] == ["summary"]
    expected = [a.as_dict() for a in tracker.alerts() if a.compaction == marker]
    assert expected and [a.as_dict() for a in tracker.alerts(marker) if a.compaction == marker] == expected


def test_a_pin_never_stated_in_the_session_fails_check(capsys):
    code, out, _ = run_cli(capsys, "check", "--demo", "--pin", "Always run the linter before committing")
    assert code == 1 and "never_stated" in out and "ok" not in out.splitlines()[-1]
    code, out, _ = run_cli(capsys, "check", "--demo", "--pin", "Always run the linter before committing", "--json")
    assert [f["kind"] for f in json.loads(out)["findings"]].count("never_stated") == 1


def test_a_file_the_format_reads_no_message_from_is_exit_2(capsys):
    code, out, err = run_cli(capsys, "check", str(demo_path()), "--log-format", "codex")
    assert code == 2 and out == "" and "no message could be read as codex" in err


def test_check_with_no_rule_found_says_so_and_passes(capsys, tmp_path):
    log = tmp_path / "plain.jsonl"
    log.write_text('{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":"hello there"}}\n'
                   '{"type":"assistant","sessionId":"s","uuid":"a1","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5",'
                   '"content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":10,"output_tokens":2}}}\n')
    code, out, _ = run_cli(capsys, "check", str(log))
    assert code == 0 and out.startswith("no rule to check")


def test_pins_made_in_the_tui_add_to_the_auto_rules_and_unpinning_an_auto_rule_hides_it_undoably(tmp_path):
    log = tmp_path / "demo.jsonl"
    log.write_bytes(demo_path().read_bytes())
    tracker = Tracker.open(str(log), window=DEMO_WINDOW, saved_pins=True)
    auto = [r.id for r in tracker.rules]
    assert tracker.pin("Keep the weekly report under 300 words") and [r.source for r in tracker.rules].count("auto") == 3
    hidden = auto[1]
    assert tracker.unpin(hidden) is not None and hidden not in [r.id for r in tracker.rules]
    assert not any(a.constraint == hidden for a in tracker.alerts())
    again = Tracker.open(str(log), window=DEMO_WINDOW, saved_pins=True)  # saved outside the log, used next time
    assert hidden not in [r.id for r in again.rules] and "saved" in [r.source for r in again.rules]
    assert load_session_pins(log)[0].hidden == [hidden]
    assert again.unhide() == [hidden] and hidden in [r.id for r in again.rules]
    assert Tracker.open(str(log), RuleRequest(), window=DEMO_WINDOW).rules == Tracker.open(str(log), window=DEMO_WINDOW).rules
    assert log.read_bytes() == demo_path().read_bytes()
