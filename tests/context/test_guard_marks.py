"""ctxtop's own hooks seen in the transcript: "re-injected by ctxtop" and "blocked by ctxtop" close the loop."""

from __future__ import annotations

import json

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.guard.hooks import answer
from ctxtop.context.guard.payload import parse_payload
from ctxtop.context.tracker import Tracker
from ctxtop.tui.demo import demo_path

from ..conftest import workers_done

HEAD = {"isSidechain": False, "userType": "external", "cwd": "/srv/ops-agent", "sessionId": "d3m0c0de-8000-4e00-9000-5eed00000000",
        "version": "2.1.92", "gitBranch": "main"}


def line(**record) -> bytes:
    return json.dumps({**HEAD, **record}, ensure_ascii=False).encode() + b"\n"


def hook_answer(payload: dict) -> dict:
    result = answer(parse_payload(json.dumps(payload).encode()))
    assert result.output is not None
    return result.output


def guarded_demo(tmp_path):
    """The demo to its first compaction, then what Claude Code writes when ctxtop's hooks act: the SessionStart
    hook's re-injection (a hook_success attachment), and a send_email call that the PreToolUse hook denied."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:205]))
    common = {"session_id": HEAD["sessionId"], "transcript_path": str(path), "cwd": "/srv/ops-agent"}
    reinjected = hook_answer({**common, "hook_event_name": "SessionStart", "source": "compact"})
    email = {"to": "purchasing@example.com", "body": "请联系客户张先生 13800138000"}
    denied = hook_answer({**common, "hook_event_name": "PreToolUse", "tool_name": "send_email", "tool_input": email})
    reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
    with open(path, "ab") as handle:
        handle.write(line(type="attachment", uuid="g1", parentUuid=None, timestamp="2026-12-03T10:00:00.000Z",
                          attachment={"type": "hook_success", "hookName": "SessionStart:compact", "hookEvent": "SessionStart",
                                      "toolUseID": "SessionStart", "command": "ctxtop hook", "stdout": json.dumps(reinjected, ensure_ascii=False),
                                      "stderr": "", "exitCode": 0, "content": "", "durationMs": 90}))
        handle.write(line(type="assistant", uuid="g2", parentUuid="g1", timestamp="2026-12-03T10:00:01.000Z",
                          message={"id": "msg_g2", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                   "content": [{"type": "tool_use", "id": "toolu_g2", "name": "send_email", "input": email}],
                                   "usage": {"input_tokens": 1500, "output_tokens": 40}}))
        handle.write(line(type="user", uuid="g3", parentUuid="g2", timestamp="2026-12-03T10:00:02.000Z",
                          message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_g2", "is_error": True,
                                                                "content": reason}]}))
    return path


def test_the_hooks_acting_are_alerts_of_their_own(tmp_path):
    tracker = Tracker.open(str(guarded_demo(tmp_path)))
    alerts = tracker.alerts()
    marks = [a for a in alerts if a.kind.by_guard]
    assert [a.kind for a in marks] == [AlertKind.GUARD_REINJECTED, AlertKind.GUARD_BLOCKED]
    assert "3 rule(s)" in marks[0].detail and marks[0].message == 206
    assert marks[1].constraint == "wecom-only" and "wecom-only, no-phone-numbers" in marks[1].detail
    # A denied call never ran: it breaks no rule, and `check` does not fail on it.
    assert not [a for a in alerts if a.kind is AlertKind.VIOLATION]
    assert not any(a.fails for a in marks)
    # The re-injected rules are in the window again.
    snapshot = tracker.snapshot()
    assert {c["id"]: c["status"] for c in snapshot["constraints"]} == {"budget-8000": "kept", "wecom-only": "kept", "no-phone-numbers": "kept"}
    assert {"guard_reinjected", "guard_blocked"} <= {a["kind"] for a in snapshot["alerts"]}


def test_the_marks_are_in_the_exports(tmp_path):
    from ctxtop.context.output.markdown import render_markdown

    tracker = Tracker.open(str(guarded_demo(tmp_path)))
    markdown = render_markdown(tracker.snapshot())
    assert "guard\\_reinjected" in markdown and "guard\\_blocked" in markdown
    assert "re-injected by ctxtop: 3 rule(s)" in markdown and "blocked by ctxtop: its PreToolUse hook denied" in markdown


def test_a_followed_log_shows_the_denial_as_check_does(tmp_path):
    path = guarded_demo(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    live_path = tmp_path / "live.jsonl"
    live_path.write_bytes(b"".join(lines[:-1]))  # the denied call, its result not written yet
    tracker = Tracker.open(str(live_path), live=True)
    with open(live_path, "ab") as handle:
        handle.write(lines[-1])
    tracker.poll()
    kinds = [a.kind for a in tracker.alerts()]
    assert AlertKind.GUARD_BLOCKED in kinds and AlertKind.VIOLATION not in kinds


def test_text_quoting_the_mark_elsewhere_is_not_a_mark(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(line(type="user", uuid="u1", parentUuid=None, timestamp="2026-12-03T10:00:00.000Z",
                          message={"role": "user", "content": "What does 'blocked by ctxtop' or 're-injected by ctxtop' mean?"}))
    assert not [a for a in Tracker.open(str(path)).alerts() if a.kind.by_guard]


async def test_the_timeline_marks_where_ctxtop_acted(tmp_path):
    from ctxtop.tui.app import CtxtopApp
    from ctxtop.tui.widgets.panels import AlertsTable
    from ctxtop.tui.widgets.timeline import GUARD_MARK, Timeline

    app = CtxtopApp(str(guarded_demo(tmp_path)), window=8000)
    async with app.run_test(size=(120, 40)) as pilot:
        timeline = app.query_one(Timeline)
        for _ in range(1500):
            await pilot.pause(0.02)
            if timeline.guard_marks:
                break
        await workers_done(app)
        await pilot.pause()
        assert timeline.guard_marks == [206, 208]
        await pilot.press("home")  # the cursor (and its label) away from the marks
        for _ in range(1500):
            await pilot.pause(0.02)
            if timeline.cursor == 1:
                break
        assert GUARD_MARK in timeline.render().plain.splitlines()[-1]
        table = app.query_one(AlertsTable)
        shown = [str(table.get_row_at(row)[1]) for row in range(table.row_count)]
        assert "guard_reinjected" in shown and "guard_blocked" in shown


def demo_with_a_denied_call(tmp_path, result: str, is_error: bool = True):
    """The demo to its first compaction, then a send_email call with a phone number (it breaks wecom-only and
    no-phone-numbers) whose result is ``result``: what Claude Code wrote for it."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:205]))
    email = {"to": "purchasing@example.com", "body": "请联系客户张先生 13800138000"}
    with open(path, "ab") as handle:
        handle.write(line(type="assistant", uuid="h1", parentUuid=None, timestamp="2026-12-03T10:00:01.000Z",
                          message={"id": "msg_h1", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                   "content": [{"type": "tool_use", "id": "toolu_h1", "name": "send_email", "input": email}],
                                   "usage": {"input_tokens": 1500, "output_tokens": 40}}))
        handle.write(line(type="user", uuid="h2", parentUuid="h1", timestamp="2026-12-03T10:00:02.000Z",
                          message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_h1",
                                                                "is_error": is_error, "content": result}]}))
    return path


# What Claude Code wrote for a PreToolUse hook's denial: the reason dropped (2.1.143, anthropics/claude-code#59643;
# 2.1.220, #82642 quotes the record as "Error: Hook PreToolUse:Agent denied this tool"), or after "hook error" (#88292).
HOOK_DENIALS = ["Hook PreToolUse:send_email denied this tool", "<tool_use_error>Error: Hook PreToolUse:send_email denied this tool</tool_use_error>",
                "PreToolUse:send_email hook error: [/opt/guard/check.sh]: not today"]


def test_a_denial_whose_reason_the_log_dropped_is_a_call_a_hook_blocked(tmp_path):
    for n, text in enumerate(HOOK_DENIALS):
        folder = tmp_path / str(n)
        folder.mkdir()
        alerts = Tracker.open(str(demo_with_a_denied_call(folder, text))).alerts()
        blocked = [a for a in alerts if a.kind is AlertKind.HOOK_BLOCKED]
        assert [(a.message, a.constraint) for a in blocked] == [(207, "wecom-only")], text  # at the denial (the call is 206)
        assert "wecom-only, no-phone-numbers" in blocked[0].detail and "does not show whose hook" in blocked[0].detail
        assert not [a for a in alerts if a.kind in (AlertKind.VIOLATION, AlertKind.GUARD_BLOCKED)]  # it never ran; not ours for sure
        assert not blocked[0].fails and not blocked[0].kind.by_guard


def test_a_call_that_ran_and_failed_still_broke_its_rules(tmp_path):
    for n, (text, is_error) in enumerate([("SMTP error: connection refused", True), (HOOK_DENIALS[0], False)]):
        folder = tmp_path / str(n)
        folder.mkdir()
        kinds = [a.kind for a in Tracker.open(str(demo_with_a_denied_call(folder, text, is_error))).alerts()]
        assert AlertKind.VIOLATION in kinds and AlertKind.HOOK_BLOCKED not in kinds


def test_a_followed_log_takes_back_the_violation_when_the_denial_arrives(tmp_path):
    path = demo_with_a_denied_call(tmp_path, HOOK_DENIALS[0])
    lines = path.read_bytes().splitlines(keepends=True)
    live_path = tmp_path / "live.jsonl"
    live_path.write_bytes(b"".join(lines[:-1]))
    tracker = Tracker.open(str(live_path), live=True)
    assert AlertKind.VIOLATION in [a.kind for a in tracker.alerts()]  # the call, its result not written yet
    with open(live_path, "ab") as handle:
        handle.write(lines[-1])
    tracker.poll()
    kinds = [a.kind for a in tracker.alerts()]
    assert AlertKind.HOOK_BLOCKED in kinds and AlertKind.VIOLATION not in kinds
