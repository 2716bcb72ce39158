"""`ctxtop hook` and `ctxtop statusline`, driven with the documented payloads on the demo and real transcripts."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxtop.context.guard.reinject import REINJECTED_MARK
from ctxtop.context.guard.status import short_tokens
from ctxtop.context.guard.transcript import known_path, known_transcript
from ctxtop.tui import entry
from ctxtop.tui.demo import demo_path

from ..conftest import SHARED_FIXTURES

DEMO_RULES = ["预算上限 8000 元，超过必须停下来问我", "只允许用企业微信发通知，不要发邮件", "客户名单里的手机号不能出现在任何对外文本里"]
REAL = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def run(command: str, payload, monkeypatch, capsys, *options: str) -> tuple[int, str, str]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = entry.main([command, *options])
    out, err = capsys.readouterr()
    return code, out, err


def demo_until(tmp_path: Path, line: int) -> Path:
    """The demo transcript as Claude Code had written it at ``line`` (205: just after its first compaction)."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:line]))
    return path


def event(name: str, transcript, **fields) -> dict:
    return {"session_id": "d3m0c0de-8000-4e00-9000-5eed00000000", "transcript_path": str(transcript), "cwd": "/srv/ops-agent",
            "permission_mode": "default", "hook_event_name": name, **fields}


def tool_call(transcript, name: str, tool_input: dict) -> dict:
    return event("PreToolUse", transcript, tool_name=name, tool_input=tool_input, tool_use_id="toolu_01")


# --- SessionStart after a compaction ------------------------------------------------------------------
def test_session_start_after_the_first_compaction_reinjects_the_lost_rules_verbatim(tmp_path, monkeypatch, capsys):
    code, out, err = run("hook", event("SessionStart", demo_until(tmp_path, 205), source="compact", model="claude-sonnet-4-5"), monkeypatch, capsys)
    assert code == 0 and err == ""
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    context = answer["additionalContext"]
    assert REINJECTED_MARK in context
    for rule in DEMO_RULES:
        assert f"- {rule}\n" in context + "\n"  # each rule verbatim, on its own line
    assert "8000 元" in context.split("the summary dropped")[1]  # and the cap among the facts the summary lost
    # Six of the 50 numbers the audit lists as lost (it lists 50 at most): how many more, said as such.
    assert "- numbers: 8000 元, 396 元, 2772 元, 147 元, 8820 元, 285 元 (at least 44 more)" in context


def test_session_start_says_nothing_when_nothing_was_lost(tmp_path, monkeypatch, capsys):
    # Before any compaction every rule is in the window: nothing to put back.
    code, out, err = run("hook", event("SessionStart", demo_until(tmp_path, 150), source="compact"), monkeypatch, capsys)
    assert (code, out, err) == (0, "", "")


def test_session_start_other_than_after_a_compaction_is_left_alone(tmp_path, monkeypatch, capsys):
    code, out, _ = run("hook", event("SessionStart", demo_until(tmp_path, 205), source="startup"), monkeypatch, capsys)
    assert (code, out) == (0, "")


def test_pre_compact_record_is_what_the_session_start_compares_against(tmp_path, monkeypatch, capsys):
    before = demo_until(tmp_path, 203)
    code, out, _ = run("hook", event("PreCompact", before, trigger="auto", custom_instructions=""), monkeypatch, capsys)
    assert (code, out) == (0, "")  # never blocks
    record = json.loads(known_path(before, "precompact").read_text(encoding="utf-8"))
    assert {r["id"]: r["status"] for r in record["rules"]} == {"budget-8000": "kept", "wecom-only": "kept", "no-phone-numbers": "kept"}
    assert "8000 元" in record["facts"]["numbers"]
    assert not (tmp_path / "session.jsonl.precompact.json").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]
    # The compaction is written; the record (not a second read of the whole log) says what the window held.
    before.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:205]))
    monkeypatch.setattr("ctxtop.context.guard.hooks._facts_before_last_compaction", lambda known: pytest.fail("the record was not used"))
    code, out, _ = run("hook", event("SessionStart", before, source="compact"), monkeypatch, capsys)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and all(rule in context for rule in DEMO_RULES) and "8000 元" in context


def test_session_start_on_a_real_compacted_transcript(monkeypatch, capsys):
    if not REAL.is_file():
        pytest.skip(f"shared fixture missing: {REAL}")
    code, out, err = run("hook", event("SessionStart", REAL, source="compact"), monkeypatch, capsys)
    assert code == 0 and "internal error" not in err
    # The session states no rule; its compaction dropped paths and identifiers the window held: those come back, briefly.
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(f"[{REINJECTED_MARK} after the compaction]") and "Rules in force" not in context
    assert "- paths: " in context and "priv/repo/migrations/20260211213000_add_annotation_message_refs_and_source.exs" in context
    assert len(context) < 1500
    # Whole paths only (a path cut in the middle names no file), and a path the summary names from the project's
    # root is not lost: lib/spotter/transcripts/message.ex is in it.
    paths = next(line for line in context.splitlines() if line.startswith("- paths: "))
    assert "…," not in paths and not paths.endswith("…") and "transcripts/message.ex" not in paths
    # How many more the compaction lost, not how many more of the six: the audit lists 50 at most.
    assert paths.endswith(f"(at least {50 - paths.count(', ') - 1} more)"), paths



def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2  # how Claude Code (JavaScript) counts a string's characters


def test_many_lost_rules_stay_under_claude_codes_limit_for_added_context(tmp_path, monkeypatch, capsys):
    # Claude Code keeps a hook's additionalContext in the window up to 10,000 characters; past that the model gets a
    # 2 KB preview and a file path (anthropics/claude-code#91614, #94358). A project of 150 rules, all lost: the answer
    # was 17,000 characters, so the model was given back about 20 of them, and nothing said which were not.
    path = demo_until(tmp_path, 205)
    lines = path.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    rules = [f"Never change the settings of service number {i} in the cluster without asking its team first." for i in range(150)]
    first["message"]["content"] = "Project rules:\n" + "\n".join(f"- {rule}" for rule in rules)
    path.write_bytes(json.dumps(first, ensure_ascii=False).encode() + b"\n" + b"".join(lines[1:]))
    code, out, err = run("hook", event("SessionStart", path, source="compact"), monkeypatch, capsys)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and utf16_length(context) <= 10_000
    shown = [rule for rule in rules if f"- {rule}\n" in context + "\n"]
    assert shown == rules[:len(shown)] and len(shown) > 80  # word for word, in order, as many as fit
    left_out = len(rules) - len(shown) + 2  # (and the demo's two other rules, stated later)
    assert f"({left_out} more rule(s) the compaction lost are not repeated here" in context and "too long" in err


# --- PreToolUse ---------------------------------------------------------------------------------------
def deny_reason(out: str) -> str:
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse" and answer["permissionDecision"] == "deny"
    return answer["permissionDecisionReason"]


def test_pre_tool_use_denies_the_demo_email_with_a_phone_number(monkeypatch, capsys):
    call = tool_call(demo_path(), "send_email", {"to": "purchasing@example.com", "subject": "本周采购汇总",
                                                 "body": "本周共 90 张订单，PO-1503 已放行。如有疑问请联系客户张先生 13800138000。"})
    code, out, _ = run("hook", call, monkeypatch, capsys)
    reason = deny_reason(out)
    assert code == 0 and "blocked by ctxtop" in reason
    assert "[wecom-only] 只允许用企业微信发通知，不要发邮件" in reason and "forbidden channel" in reason
    assert "[no-phone-numbers]" in reason and "phone number" in reason


def test_pre_tool_use_denies_an_approval_over_the_cap(monkeypatch, capsys):
    code, out, _ = run("hook", tool_call(demo_path(), "approve_order", {"order_id": "PO-1503", "amount": 12600, "note": "按汇总直接放行"}),
                       monkeypatch, capsys)
    reason = deny_reason(out)
    assert "[budget-8000] 预算上限 8000 元，超过必须停下来问我" in reason and "12600 exceeds the cap 8000" in reason


def test_pre_tool_use_allows_an_ordinary_call(monkeypatch, capsys):
    assert run("hook", tool_call(demo_path(), "query_order", {"id": "PO-1506"}), monkeypatch, capsys) == (0, "", "")
    assert run("hook", tool_call(demo_path(), "approve_order", {"order_id": "PO-1501", "amount": 7999}), monkeypatch, capsys) == (0, "", "")


@pytest.mark.parametrize("rule, amount, cap", [
    # Caps on something else than money: no amount is capped by them.
    ("No more than 3 retries for a failed shipment call.", 100, None),
    ("At most 2 concurrent deploys.", 100, None),
    ("limit refunds to 3 per day", 100, None),
    ("退款不超过3次", 100, None),
    ("budget: 5 minutes", 100, None),
    ("Never refund more than 2 items", 100, None),
    ("Never exceed 2 orders per customer", 100, None),
    ("The project costs $300 a month.", 900, None),  # money, but no cap
    # Caps on money, however written.
    ("Never spend more than $500.", 900, "500"),
    ("Never spend more than $500.", 400, None),
    ("单笔退款不超过 500 元", 600, "500"),
    ("预算上限 8000 元，超过必须停下来问我", 12600, "8000"),
    ("budget cap 8000, stop and ask", 9000, "8000"),
    ("Charge at most 3 times; never more than $50", 60, "50"),
    ("the budget is $5k", 6000, "5000"),
    ("预算不超过1万元", 12000, "10000"),
    ("¥500 max", 900, "500"),
    ("Keep each invoice under $300", 900, "300"),
    ("Limit payments to 5 per hour and $200 each", 900, "200"),
    ("No more than 5 refunds per customer per day.", 100, None),  # refunds counted, not their money
    ("Budget 2025 planning doc must be under 10 pages", 3000, None),
    ("Never exceed a budget of 5k.", 6000, "5000"),
    ("Never issue a refund over $500.", 9000, "500"),
    ("Refunds are capped at $200", 900, "200"),
    ("Any single charge above $10k", 12000, "10000"),
    ("单笔转账不能高于1000元", 1200, "1000"),
])
def test_only_a_cap_on_money_caps_an_amount(tmp_path, monkeypatch, capsys, rule, amount, cap):
    pins = tmp_path / "pins.toml"
    pins.write_text(f'[[pin]]\nid = "cap"\ntext = "{rule}"\n', encoding="utf-8")
    call = tool_call(demo_path(), "mcp__erp__create_refund", {"amount": amount})
    _, out, _ = run("hook", call, monkeypatch, capsys, "--no-auto", "--pins", str(pins))
    assert (f"amount {amount} exceeds the cap {cap}" in deny_reason(out)) if cap else out == ""


def test_ask_instead_of_deny(monkeypatch, capsys):
    _, out, _ = run("hook", tool_call(demo_path(), "approve_order", {"amount": 12600}), monkeypatch, capsys, "--ask")
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    # The user reads it and decides: not told to ask themselves, nor that ctxtop blocked the call.
    reason = answer["permissionDecisionReason"]
    assert reason.startswith("ctxtop asks: this call breaks a rule") and "ask the user" not in reason and "blocked" not in reason
    assert "[budget-8000]" in reason and "12600 exceeds the cap 8000" in reason


def test_a_call_a_forbid_pattern_ran_out_of_time_on_is_put_to_the_user(tmp_path, monkeypatch, capsys):
    from ctxtop.context.rules import forbid

    monkeypatch.setattr(forbid, "SEARCH_SECONDS", 0.01)
    forbid.forbid_pattern.cache_clear()
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "no-rm"\ntext = "Never rm -rf"\nforbid = ["(a|aa)+$|rm -rf"]\n')
    try:
        call = tool_call(demo_path(), "Bash", {"command": "a" * 5000 + "b; rm -rf /"})
        _, out, err = run("hook", call, monkeypatch, capsys, "--no-auto", "--pins", str(pins))
        forbid.forbid_pattern.cache_clear()  # (a pattern that ran out is not searched again in the same process)
        short = tool_call(demo_path(), "Bash", {"command": "aab; rm -rf /"})
        _, denied, _ = run("hook", short, monkeypatch, capsys, "--no-auto", "--pins", str(pins))
    finally:
        forbid.forbid_pattern.cache_clear()
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"  # not let through unseen
    assert answer["permissionDecisionReason"].startswith("ctxtop asks: this call could not be checked")
    assert "[no-rm] Never rm -rf" in answer["permissionDecisionReason"] and "not checked against [no-rm]" in err
    assert "[no-rm] Never rm -rf" in deny_reason(denied)  # the same rule, judged in time, denies


def test_project_pins_and_forbid_patterns_apply_without_auto(tmp_path, monkeypatch, capsys):
    project = tmp_path / "repo"
    (project / ".ctxtop").mkdir(parents=True)
    (project / "src").mkdir()
    (project / ".ctxtop" / "pins.toml").write_text('[[pin]]\nid = "no-push"\ntext = "Never push to main"\nforbid = ["git push.*main"]\n')
    call = {**tool_call(demo_path(), "Bash", {"command": "git push origin main"}), "cwd": str(project / "src")}
    _, out, _ = run("hook", call, monkeypatch, capsys, "--no-auto")
    assert "[no-push] Never push to main" in deny_reason(out)
    # --no-auto: the demo's own rules are not in force.
    assert run("hook", {**call, "tool_name": "approve_order", "tool_input": {"amount": 12600}}, monkeypatch, capsys, "--no-auto")[1] == ""


@pytest.mark.parametrize("pattern, command", [
    ('^git push --force', "git push --force origin main"),
    ('rm -rf "\\$HOME"', 'rm -rf "$HOME"'),
    ('DROP TABLE users;$', "psql -c 'SELECT 1'\npsql -c DROP TABLE users;"),
    ('C:\\\\Windows', "del C:\\Windows\\x"),
], ids=["anchored at the start", "with a quote", "anchored at the end", "with a backslash"])
def test_a_forbid_pattern_matches_the_command_as_the_tool_gets_it(tmp_path, monkeypatch, capsys, pattern, command):
    # The log (and the hook's tool_input, dumped) hold the input as JSON text: quotes and backslashes escaped, the
    # command inside {"command": "…"}. A pattern written against the command itself must still match it.
    (tmp_path / ".ctxtop").mkdir()
    (tmp_path / ".ctxtop" / "pins.toml").write_text(f'[[pin]]\nid = "no-it"\ntext = "Never do it"\nforbid = [{json.dumps(pattern)}]\n')
    call = {**tool_call(demo_path(), "Bash", {"command": command, "description": "run it"}), "cwd": str(tmp_path)}
    _, out, _ = run("hook", call, monkeypatch, capsys, "--no-auto")
    assert "[no-it] Never do it" in deny_reason(out)


@pytest.mark.parametrize("depth", [10, 990, 5000])
@pytest.mark.parametrize("command", ["git push origin main", "git \\u0070ush origin main"], ids=["plain", "escaped"])
def test_a_deeply_nested_tool_input_is_still_judged(tmp_path, monkeypatch, capsys, depth, command):
    (tmp_path / ".ctxtop").mkdir()
    (tmp_path / ".ctxtop" / "pins.toml").write_text('[[pin]]\nid = "no-push"\ntext = "Never push to main"\nforbid = ["git push.*main"]\n')
    call = {**tool_call(demo_path(), "Bash", {"command": "COMMAND", "x": "NEST"}), "cwd": str(tmp_path)}
    # Valid JSON: at 990 Python decodes it but cannot encode it again, at 5000 it cannot decode it at all.
    payload = json.dumps(call).replace('"NEST"', "[" * depth + "]" * depth).replace("COMMAND", command).encode()
    _, out, _ = run("hook", payload, monkeypatch, capsys, "--no-auto")
    assert "[no-push] Never push to main" in deny_reason(out)


def test_odd_but_valid_payloads_are_judged_or_refused_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / ".ctxtop").mkdir()
    (tmp_path / ".ctxtop" / "pins.toml").write_text('[[pin]]\nid = "no-push"\ntext = "Never push to main"\nforbid = ["git push.*main"]\n')
    call = {**tool_call(demo_path(), "Bash", {"command": "git push origin main", "x": "NEST"}), "cwd": str(tmp_path)}
    deep = json.dumps(call).replace('"NEST"', "[" * 5000 + "]" * 5000)
    # With a byte-order mark, or in UTF-16, as json.loads reads bytes: judged the same.
    for data in (b"\xef\xbb\xbf" + deep.encode(), deep.encode("utf-16")):
        assert "[no-push]" in deny_reason(run("hook", data, monkeypatch, capsys, "--no-auto")[1])
    # A path that is a deep array is no path; one too long for the file system is no pins folder.
    code, out, err = run("hook", deep.replace(f'"cwd": "{tmp_path}"', '"cwd": ' + "[" * 5000 + "]" * 5000).encode(), monkeypatch, capsys)
    assert (code, out) == (0, "") and "payload field 'cwd' is not a string" in err
    code, out, err = run("hook", {**call, "x": 1, "cwd": "/" + "a" * 5000}, monkeypatch, capsys, "--no-auto")
    assert (code, out) == (0, "") and "internal error" not in err


@pytest.mark.parametrize("tool_input", [
    '{"amount": 900, "x": NEST}', '{"amount": 900, "x": NaN}', '{"amount": 900, "note": 1e999}', '{"amount": "900"}',
    '{"total": "$1,200.50"}', '{"amount": "9000 USD"}', '{"amount": "USD 1200"}', '{"amount": "1200美元"}', '{"amount": "1.2k"}',
    '{"amounts": [9000]}', '{"purchase_units": [{"amount": {"currency_code": "USD", "value": "9000.00"}}]}',
    '{"x": NEST, "y": {"amount": 9E+3}}'])
def test_an_amount_over_a_money_cap_is_found_however_the_input_is_written(tmp_path, monkeypatch, capsys, tool_input):
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "cap"\ntext = "Never spend more than $500."\n', encoding="utf-8")
    call = json.dumps(tool_call(demo_path(), "pay", {})).replace('"tool_input": {}', '"tool_input": ' + tool_input)
    _, out, _ = run("hook", call.replace("NEST", "[" * 300 + "]" * 300).encode(), monkeypatch, capsys, "--no-auto", "--pins", str(pins))
    assert "exceeds the cap 500" in deny_reason(out)


@pytest.mark.parametrize("tool_input", [{"amount": "1200元"}, {"amount": 450, "currency": "EUR"}, {"amount": "¥3000"}])
def test_an_amount_in_another_currency_than_the_caps_is_put_to_the_user(tmp_path, monkeypatch, capsys, tool_input):
    # Neither over nor under $500 without an exchange rate: not denied as broken, nor let through as kept.
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "cap"\ntext = "Never spend more than $500."\n', encoding="utf-8")
    _, out, err = run("hook", tool_call(demo_path(), "pay", tool_input), monkeypatch, capsys, "--no-auto", "--pins", str(pins))
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    reason = answer["permissionDecisionReason"]
    assert reason.startswith("ctxtop asks: this call could not be checked") and "[cap] Never spend more than $500." in reason
    assert "in another currency than the cap 500 $: not compared (ctxtop knows no exchange rates)" in reason
    assert "not checked against [cap]" in err


def test_the_saved_pins_of_the_session_are_in_force(tmp_path, monkeypatch, capsys):
    from ctxtop.context.rules.pin_store import SavedPins, save_session_pins

    transcript = demo_until(tmp_path, 205)
    save_session_pins(transcript, SavedPins(["Never call delete_customer"]))
    _, out, _ = run("hook", tool_call(transcript, "delete_customer", {"id": 7}), monkeypatch, capsys, "--no-auto")
    assert out == ""  # a saved pin without a forbid pattern or a channel forbids nothing a call shows
    save_session_pins(transcript, SavedPins(["不要发邮件给客户"]))
    _, out, _ = run("hook", tool_call(transcript, "send_email", {"to": "a@example.com"}), monkeypatch, capsys, "--no-auto")
    assert "不要发邮件给客户" in deny_reason(out)


def test_a_rule_hidden_in_the_tui_stays_hidden_after_a_recorded_compaction(tmp_path, monkeypatch, capsys):
    from ctxtop.context.rules.pin_store import SavedPins, save_session_pins

    transcript = demo_until(tmp_path, 203)
    run("hook", event("PreCompact", transcript, trigger="auto"), monkeypatch, capsys)  # the record holds wecom-only, kept
    transcript.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:205]))
    save_session_pins(transcript, SavedPins([], ["wecom-only"]))  # `u` on the auto-detected rule, after the compaction
    assert run("hook", tool_call(transcript, "send_email", {"to": "a@example.com"}), monkeypatch, capsys)[1] == ""
    context = json.loads(run("hook", event("SessionStart", transcript, source="compact"), monkeypatch, capsys)[1])
    assert DEMO_RULES[1] not in context["hookSpecificOutput"]["additionalContext"]
    assert "wecom-only" not in run("statusline", event("Status", transcript), monkeypatch, capsys)[1]


# --- bad input: exit 0, a note, nothing on stdout ----------------------------------------------------------
@pytest.mark.parametrize("payload", [b"garbage", b"", b"[1, 2]", b'{"hook_event_name": 3}', b'{"tool_name": "x"}', "\udcff".encode("utf-8", "surrogatepass")])
def test_a_garbage_payload_exits_0_with_a_note(payload, monkeypatch, capsys):
    code, out, err = run("hook", payload, monkeypatch, capsys)
    assert (code, out) == (0, "") and err.startswith("ctxtop: ") and err.count("\n") == 1


def test_a_missing_transcript_exits_0_with_a_note(tmp_path, monkeypatch, capsys):
    for name in ("PreToolUse", "SessionStart", "PreCompact"):
        code, out, err = run("hook", event(name, tmp_path / "gone.jsonl", source="compact", tool_name="send_email", tool_input={}),
                             monkeypatch, capsys)
        assert (code, out) == (0, "") and "no such file" in err and err.count("\n") == 1


def test_an_internal_error_lets_the_agent_go_on(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("ctxtop.context.guard.hooks.known_transcript", broken)
    code, out, err = run("hook", tool_call(demo_path(), "send_email", {}), monkeypatch, capsys)
    assert (code, out) == (0, "") and "internal error: RuntimeError: boom" in err and err.count("\n") == 1


def test_the_console_script_answers_in_a_separate_process(tmp_path):
    payload = json.dumps(tool_call(demo_path(), "approve_order", {"amount": 12600})).encode()
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run([sys.executable, "-m", "ctxtop", "hook"], input=payload, capture_output=True, env=env, timeout=60)
    assert result.returncode == 0 and "budget-8000" in deny_reason(result.stdout.decode())
    result = subprocess.run([sys.executable, "-m", "ctxtop", "hook"], input=b"{", capture_output=True, env=env, timeout=60)
    assert (result.returncode, result.stdout) == (0, b"") and b"not JSON" in result.stderr


@pytest.mark.parametrize("command, payload", [("statusline", {"transcript_path": str(demo_path())}),
                                              ("hook", tool_call(demo_path(), "approve_order", {"amount": 12600}))])
def test_an_agent_that_stopped_reading_gets_no_traceback(command, payload):
    # Claude Code drops a status line it no longer waits for (a newer one replaced it) and a hook past its time.
    read, write = os.pipe()
    with subprocess.Popen([sys.executable, "-m", "ctxtop", command], stdin=subprocess.PIPE, stdout=write, stderr=subprocess.PIPE) as process:
        os.close(write)
        os.close(read)  # (before the answer is written: it is a broken pipe)
        _, err = process.communicate(json.dumps(payload).encode(), timeout=60)
    assert process.returncode == 0 and b"Traceback" not in err and b"Exception ignored" not in err
    assert err.decode().count("\n") <= 1



@pytest.mark.parametrize("stderr", ["closed", "a broken pipe"])
def test_notes_never_reach_stdout_nor_fail_the_hook_whatever_stderr_is(tmp_path, stderr):
    # With no stderr (closed: Python's sys.stderr is None), print() wrote the notes to stdout: a SessionStart's notes
    # became context for the model, and a denial after a note was no longer JSON, so the agent let the call through.
    # With a stderr nobody reads, a note was a BrokenPipeError: exit 1 and no answer.
    pins = tmp_path / "pins.toml"
    pins.write_text('[[pin]]\nid = "no-push-main"\ntext = "Never push to main"\nforbid = ["git push\\\\b.*\\\\bmain"]\n')
    payload = json.dumps(tool_call(tmp_path / "missing.jsonl", "Bash", {"command": "git push origin main"})).encode()
    read, write = os.pipe()
    os.close(read)  # (a pipe nobody reads: writing to it is a broken pipe)

    def no_stderr() -> None:
        os.close(2)

    with subprocess.Popen([sys.executable, "-m", "ctxtop", "hook", "--pins", str(pins)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=write if stderr == "a broken pipe" else None,
                          preexec_fn=no_stderr if stderr == "closed" else None) as process:
        os.close(write)
        out, _ = process.communicate(payload, timeout=60)
    assert process.returncode == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_fast_commands_do_not_load_the_terminal_ui():
    code = ("import sys, io; from ctxtop.tui import entry; sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}')); entry.main(['hook']); "
            "print(','.join(m for m in ('textual', 'rich', 'ctxtop.tui.cli', 'ctxtop.context.tracker', 'ctxtop.context.strategies') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == ""


# --- what is kept between calls ------------------------------------------------------------------------------
def test_appended_rules_are_read_from_the_appended_bytes_only(tmp_path):
    transcript = demo_until(tmp_path, 205)
    first = known_transcript(transcript)
    assert [r.id for r in first.rules] == ["budget-8000", "wecom-only", "no-phone-numbers"] and first.compactions == 1
    with open(transcript, "ab") as handle:
        handle.write(json.dumps({"type": "user", "uuid": "u-new", "sessionId": "s", "timestamp": "2026-12-03T10:00:00.000Z",
                                 "message": {"role": "user", "content": "Never push to main."}}).encode() + b"\n")
    later = known_transcript(transcript)
    assert later.offset == transcript.stat().st_size and later.messages == first.messages + 1
    assert [r.text for r in later.rules][-1] == "Never push to main."
    # A rewritten file is read whole again, not patched.
    transcript.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:150]))
    again = known_transcript(transcript)
    assert again.compactions == 0 and "Never push to main." not in [r.text for r in again.rules]


# --- the status line --------------------------------------------------------------------------------------------
def test_statusline_after_the_first_compaction(tmp_path, monkeypatch, capsys):
    status = {"session_id": "s", "transcript_path": str(demo_until(tmp_path, 205)), "cwd": "/srv/ops-agent",
              "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
              "workspace": {"current_dir": "/srv/ops-agent", "project_dir": "/srv/ops-agent"}, "version": "2.1.30"}
    code, out, err = run("statusline", status, monkeypatch, capsys)
    assert code == 0 and err == "" and out.count("\n") == 1
    assert " · 1 compaction · rules: 2 lost (wecom-only, no-phone-numbers); 1 weakened (budget-8000)" in out
    assert out.startswith("ctx ") and "%" in out
    assert run("statusline", status, monkeypatch, capsys)[1] == out  # remembered while the file is unchanged


def test_statusline_takes_the_window_size_the_agent_gives(tmp_path, monkeypatch, capsys):
    status = {"transcript_path": str(demo_until(tmp_path, 205)), "model": {"id": "claude-sonnet-4-5-20250929"}}
    shown = run("statusline", status, monkeypatch, capsys)[1].split(" · ")[0]
    used = shown.split()[1].split("/")[0]
    # The log names the model without its 1M variant: the payload's model id, or the size it gives, says it.
    assert run("statusline", {**status, "model": {"id": "claude-sonnet-4-5[1m]"}}, monkeypatch, capsys)[1].startswith(f"ctx {used}/1.0M ")
    sized = {**status, "context_window": {"context_window_size": 500_000}}
    assert run("statusline", sized, monkeypatch, capsys)[1].startswith(f"ctx {used}/500k ")
    absurd = {**status, "context_window": {"context_window_size": 1}}  # no model's window: the log's is shown
    assert run("statusline", absurd, monkeypatch, capsys)[1].split(" · ")[0] == shown
    assert run("statusline", status, monkeypatch, capsys)[1].split(" · ")[0] == shown  # (not remembered from the calls before)
    assert shown.endswith("/200k 1%")


def test_statusline_with_every_rule_kept(tmp_path, monkeypatch, capsys):
    _, out, _ = run("statusline", {"transcript_path": str(demo_until(tmp_path, 150))}, monkeypatch, capsys)
    assert out.endswith(" · 0 compactions · rules 3 ✔\n")


def test_statusline_on_bad_input_still_prints_a_line(tmp_path, monkeypatch, capsys):
    code, out, err = run("statusline", {"transcript_path": str(tmp_path / "gone.jsonl")}, monkeypatch, capsys)
    assert (code, out) == (0, "ctx ?\n") and "no such file" in err


def test_statusline_still_prints_a_line_when_ctxtop_itself_fails(tmp_path, monkeypatch, capsys):
    from ctxtop.context.guard import status

    def broken(*_args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(status, "status", broken)
    code, out, err = run("statusline", {"transcript_path": str(demo_until(tmp_path, 150))}, monkeypatch, capsys)
    assert (code, out) == (0, "ctx ?\n") and err.count("\n") == 1
    assert "internal error: RuntimeError: a bug" in err and "no status" in err and "unguarded" not in err


def test_statusline_reads_only_what_was_appended_and_agrees_with_a_fresh_read(tmp_path, monkeypatch, capsys):
    transcript = demo_until(tmp_path, 205)
    status = {"transcript_path": str(transcript)}
    assert "rules: 2 lost (wecom-only, no-phone-numbers); 1 weakened (budget-8000)" in run("statusline", status, monkeypatch, capsys)[1]
    with open(transcript, "ab") as handle:  # the user restates one rule
        handle.write(json.dumps({"type": "user", "uuid": "u-again", "sessionId": "s", "timestamp": "2026-12-03T10:00:00.000Z",
                                 "message": {"role": "user", "content": "只允许用企业微信发通知，不要发邮件"}}, ensure_ascii=False).encode() + b"\n")
    monkeypatch.setattr("ctxtop.context.guard.status.window_state", lambda *a: pytest.fail("the whole window was read again"))
    assert run("statusline", status, monkeypatch, capsys)[1].endswith("rules: 1 lost (no-phone-numbers); 1 weakened (budget-8000)\n")
    monkeypatch.undo()
    # Two more compactions arrive: the window after the last one is read again, as a first call would.
    lines = demo_path().read_bytes().splitlines(keepends=True)
    with open(transcript, "ab") as handle:
        handle.write(b"".join(lines[205:]))
    _, incremental, _ = run("statusline", status, monkeypatch, capsys)
    known_path(transcript, "status").unlink()
    assert run("statusline", status, monkeypatch, capsys)[1] == incremental and " · 3 compactions · " in incremental


# --- Codex: PreCompact and PostCompact can observe and stop, not add context ----------------------------------
def test_post_compact_says_what_was_lost_and_stops_only_when_asked(tmp_path, monkeypatch, capsys):
    payload = {"session_id": "s", "turn_id": "t", "transcript_path": str(demo_until(tmp_path, 205)), "cwd": "/srv/ops-agent",
               "hook_event_name": "PostCompact", "model": "gpt-5-codex", "trigger": "auto"}
    code, out, err = run("hook", payload, monkeypatch, capsys)
    assert (code, out) == (0, "") and "lost or weakened 3 rule(s): budget-8000, wecom-only, no-phone-numbers" in err
    code, out, _ = run("hook", payload, monkeypatch, capsys, "--stop-on-loss")
    answer = json.loads(out)
    assert code == 0 and answer["continue"] is False and all(f"- {rule}" in answer["stopReason"] for rule in DEMO_RULES)


@pytest.mark.parametrize("recorded", [True, False], ids=["against the PreCompact record", "against the window before"])
def test_post_compact_stops_only_for_a_rule_the_compaction_lost(tmp_path, monkeypatch, capsys, recorded):
    # A pins-file rule the session never stated was not in the window before the compaction either: the compaction did
    # not lose it, and stopping the agent at every compaction for it would make --stop-on-loss unusable.
    (tmp_path / ".ctxtop").mkdir()
    (tmp_path / ".ctxtop" / "pins.toml").write_text('[[pin]]\nid = "no-force"\ntext = "Never force-push"\n')
    transcript = demo_until(tmp_path, 203)
    payload = {"session_id": "s", "turn_id": "t", "transcript_path": str(transcript), "cwd": str(tmp_path), "model": "gpt-5-codex",
               "trigger": "auto"}
    if recorded:
        run("hook", {**payload, "hook_event_name": "PreCompact"}, monkeypatch, capsys)
    transcript.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:205]))
    code, out, err = run("hook", {**payload, "hook_event_name": "PostCompact"}, monkeypatch, capsys, "--stop-on-loss")
    assert "lost or weakened 3 rule(s): budget-8000, wecom-only, no-phone-numbers" in err
    assert code == 0 and "- Never force-push" not in json.loads(out)["stopReason"]


def test_codex_compaction_hooks_on_a_codex_rollout(tmp_path, monkeypatch, capsys):
    from ..conftest import DATA

    rollout = tmp_path / "rollout-2026-12-03T10-00-00-abc.jsonl"
    rollout.write_bytes((DATA / "codex_local_compaction.jsonl").read_bytes())
    common = {"session_id": "abc", "turn_id": "t1", "transcript_path": str(rollout), "cwd": str(tmp_path), "model": "gpt-5-codex", "trigger": "auto"}
    for name in ("PreCompact", "PostCompact"):
        code, out, err = run("hook", {**common, "hook_event_name": name}, monkeypatch, capsys)
        assert code == 0 and out == "" and "internal error" not in err and "not read" not in err


# --- any payload: exit 0, and stdout is nothing or one JSON answer ---------------------------------------------------
def _field_values():
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                        max_leaves=12)


def test_any_payload_exits_0_with_at_most_one_answer(tmp_path):
    import contextlib
    from unittest import mock

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from ..parsers.test_fuzz import EXAMPLES

    transcript = str(demo_until(tmp_path, 205))
    keys = st.sampled_from(["hook_event_name", "transcript_path", "cwd", "session_id", "source", "tool_name", "tool_input", "trigger", "model"])
    events = st.sampled_from(["PreToolUse", "SessionStart", "PreCompact", "PostCompact", "Stop", ""])
    paths = st.sampled_from([transcript, str(tmp_path), str(tmp_path / "gone.jsonl"), "/dev/null", "a\x00b", ""])

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.fixed_dictionaries({"hook_event_name": events, "transcript_path": paths, "cwd": paths, "source": st.just("compact")},
                                 optional={"tool_name": st.text(max_size=20), "tool_input": _field_values()})
           | st.dictionaries(keys, _field_values(), max_size=6), st.sampled_from(["hook", "statusline"]))
    def check(payload, command):
        out, err = io.StringIO(), io.StringIO()
        stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))
        with mock.patch.object(sys, "stdin", stdin), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = entry.main([command])
        assert code == 0 and "internal error" not in err.getvalue(), err.getvalue()
        if command == "hook" and out.getvalue():
            assert isinstance(json.loads(out.getvalue()), dict)
        if command == "statusline":
            assert out.getvalue().count("\n") == 1

    check()


def test_a_bad_option_is_one_line_and_exit_0(monkeypatch, capsys):
    code, out, err = run("hook", b"{}", monkeypatch, capsys, "--nope")
    assert (code, out) == (0, "") and err.count("\n") == 1 and "unrecognized arguments: --nope" in err


def test_an_option_cut_short_is_not_taken_for_a_longer_one(monkeypatch, capsys):
    # (`check` has --pin TEXT; the hook has --pins FILE only: a rule's text is no pins file's name)
    code, out, err = run("hook", b"{}", monkeypatch, capsys, "--pin", "Never push to main")
    assert (code, out) == (0, "") and "unrecognized arguments: --pin" in err and "pins file" not in err


def test_the_guard_directory_stays_bounded(tmp_path, monkeypatch):
    from ctxtop.context.guard import transcript

    monkeypatch.setattr(transcript, "MAX_KEPT_FILES", 8)
    for number in range(12):
        path = tmp_path / f"s{number}.jsonl"
        path.write_bytes(b"".join(demo_path().read_bytes().splitlines(keepends=True)[:20]))
        known_transcript(path)
        written = known_path(path)
        if written.exists():  # an age of its own (timestamps can be coarser than these writes are apart)
            os.utime(written, (1_000_000 + number, 1_000_000 + number))
    assert len(list(transcript.guard_dir().iterdir())) <= 8
    assert known_path(tmp_path / "s11.jsonl").exists()  # the latest stays


def test_pre_tool_use_on_a_real_transcript(tmp_path, monkeypatch, capsys):
    if not REAL.is_file():
        pytest.skip(f"shared fixture missing: {REAL}")
    call = {**tool_call(REAL, "Bash", {"command": "mix test test/spotter/transcripts/resources_test.exs"}), "cwd": str(tmp_path)}
    assert run("hook", call, monkeypatch, capsys) == (0, "", "")  # the session states no rule: an ordinary call goes on
    (tmp_path / ".ctxtop").mkdir()
    (tmp_path / ".ctxtop" / "pins.toml").write_text('[[pin]]\ntext = "Never drop the dev database"\nforbid = ["mix ecto\\\\.drop"]\n')
    _, out, _ = run("hook", {**call, "tool_input": {"command": "mix ecto.drop && mix ecto.setup"}}, monkeypatch, capsys)
    assert "Never drop the dev database" in deny_reason(out)


def test_a_big_transcript_is_read_over_several_calls(tmp_path, monkeypatch, capsys):
    from ctxtop.context.guard import transcript

    monkeypatch.setattr(transcript, "READ_BUDGET_BYTES", 40_000)
    path = tmp_path / "session.jsonl"
    path.write_bytes(demo_path().read_bytes())
    code, out, err = run("hook", tool_call(path, "approve_order", {"amount": 12600}), monkeypatch, capsys)
    assert code == 0 and "transcript read to " in err and "so far" in err
    assert "+ compactions · " in run("statusline", {"transcript_path": str(path)}, monkeypatch, capsys)[1]  # "at least"
    calls = 2
    while "so far" in err:
        code, out, err = run("hook", tool_call(path, "approve_order", {"amount": 12600}), monkeypatch, capsys)
        calls += 1
        assert code == 0 and "budget-8000" in deny_reason(out) and calls < 100  # the first rules are known from the first call
    whole = known_transcript(path)
    assert calls > 3 and whole.behind == 0 and whole.compactions == 3
    assert [r.id for r in whole.rules] == ["budget-8000", "wecom-only", "no-phone-numbers"]
    assert " · 3 compactions · " in run("statusline", {"transcript_path": str(path)}, monkeypatch, capsys)[1]


def test_a_last_line_still_being_written_is_not_called_unread(tmp_path, monkeypatch, capsys):
    lines = demo_path().read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:204]) + lines[204][: len(lines[204]) // 2])
    code, out, err = run("hook", tool_call(path, "approve_order", {"amount": 12600}), monkeypatch, capsys)
    assert code == 0 and "budget-8000" in deny_reason(out) and err == ""  # not "transcript read to 99% so far"
    assert known_transcript(path).behind == 0
    assert " · 1 compaction · " in run("statusline", {"transcript_path": str(path)}, monkeypatch, capsys)[1]  # not "1+ compactions"


def test_the_facts_put_back_are_those_the_audit_finds_lost(tmp_path):
    from ctxtop.context.guard.hooks import _facts_before_last_compaction
    from ctxtop.context.guard.reinject import FACT_KINDS, reinjection
    from ctxtop.context.guard.transcript import current_session
    from ctxtop.context.rules.constraints import WindowText
    from ctxtop.context.tracker import Tracker

    path = demo_until(tmp_path, 206)  # the compaction, its summary and the model's first call after it
    audit = Tracker.open(str(path)).audit.compactions[-1]
    known = known_transcript(path)
    put_back = reinjection([], WindowText(current_session(path, known).window_at(None)), _facts_before_last_compaction(known))
    for kind in FACT_KINDS:
        assert set(put_back.facts.get(kind, [])) <= set(audit.lost_items[kind])
    assert put_back.facts["numbers"] and put_back.facts["numbers"][0] == "8000 元"


def test_output_is_utf8_whatever_the_locale(tmp_path):
    env = {**os.environ, "PYTHONIOENCODING": "latin-1", "LC_ALL": "C", "PYTHONUTF8": "0"}
    transcript = demo_until(tmp_path, 150)
    status = subprocess.run([sys.executable, "-m", "ctxtop", "statusline"], input=json.dumps({"transcript_path": str(transcript)}).encode(),
                            capture_output=True, env=env, timeout=60)
    assert status.returncode == 0 and status.stdout.decode("utf-8").endswith("rules 3 ✔\n") and status.stderr == b""
    denied = subprocess.run([sys.executable, "-m", "ctxtop", "hook"], input=json.dumps(tool_call(transcript, "send_email", {})).encode(),
                            capture_output=True, env=env, timeout=60)
    assert "只允许用企业微信发通知" in deny_reason(denied.stdout.decode("utf-8"))


def test_a_pre_compact_that_cannot_record_says_so(tmp_path, monkeypatch, capsys):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("CTXTOP_CACHE_DIR", str(tmp_path / "a-file" / "cache"))  # no folder can be made there, even by root
    code, out, err = run("hook", event("PreCompact", demo_until(tmp_path, 203), trigger="auto"), monkeypatch, capsys)
    assert (code, out) == (0, "") and "the window could not be recorded" in err and err.count("\n") == 1


def test_the_record_puts_back_the_rules_of_a_rewritten_transcript(tmp_path, monkeypatch, capsys):
    transcript = demo_until(tmp_path, 203)
    run("hook", event("PreCompact", transcript, trigger="auto"), monkeypatch, capsys)
    # The transcript is rewritten to hold only the compaction and its summary: none of the rules is stated in it.
    lines = demo_path().read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[203:205]))
    assert known_transcript(transcript).rules == []
    code, out, _ = run("hook", event("SessionStart", transcript, source="compact"), monkeypatch, capsys)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert code == 0 and all(f"- {rule}" in context for rule in DEMO_RULES)
    # What it put back stays in force: the calls it forbids are still denied, and the status line counts it.
    denied = run("hook", tool_call(transcript, "send_email", {"to": "buyer@example.com"}), monkeypatch, capsys)[1]
    assert "[wecom-only] 只允许用企业微信发通知，不要发邮件" in deny_reason(denied)
    assert "no rules" not in run("statusline", {"transcript_path": str(transcript)}, monkeypatch, capsys)[1]
    # A record from long ago is not this compaction's.
    record = known_path(transcript, "precompact")
    stale = json.loads(record.read_text(encoding="utf-8"))
    record.write_text(json.dumps({**stale, "recorded_at": stale["recorded_at"] - 3600, "compactions": 5}), encoding="utf-8")
    assert run("hook", event("SessionStart", transcript, source="compact"), monkeypatch, capsys)[1] == ""


# --- A huge tool input --------------------------------------------------------------------------------
def huge(chars: int) -> str:
    line = "def handler(event, context):  # process order PO-1503 and notify the team via the usual channel\n"
    return (line * (chars // len(line) + 1))[:chars]


def test_a_huge_call_is_judged_in_time_not_in_proportion_to_its_size():
    import time

    from ctxtop.context.guard.judge import judge_call
    from ctxtop.context.rules.constraints import make_constraint

    rules = [make_constraint(text, "pin") for text in DEMO_RULES]
    command = "curl -X POST https://api.example.com/orders -d '" + json.dumps({"note": huge(20_000_000), "amount": 12600}) + "'"
    started = time.perf_counter()
    verdict = judge_call("Bash", {"command": command}, rules)
    assert time.perf_counter() - started < 2  # read whole: seconds; read in bounded parts: a tenth of one
    assert [breach.rule.id for breach in verdict.breaches] == ["budget-8000"]  # the amount near its end


def test_an_amount_near_the_start_of_a_huge_body_is_still_caught(monkeypatch, capsys):
    command = "curl -X POST https://api.example.com/orders -d '" + json.dumps({"amount": 12600, "note": huge(10_000_000)}) + "'"
    _, out, err = run("hook", tool_call(demo_path(), "Bash", {"command": command}), monkeypatch, capsys)
    assert "amount 12600 exceeds the cap 8000" in deny_reason(out)


def test_a_phone_number_at_either_end_of_a_huge_file_is_still_caught(monkeypatch, capsys):
    for content in ("客户 13800138000\n" + huge(10_000_000), huge(10_000_000) + "客户 13800138000\n"):
        _, out, _ = run("hook", tool_call(demo_path(), "Write", {"file_path": "/srv/ops-agent/x.py", "content": content}), monkeypatch, capsys)
        assert "phone number" in deny_reason(out)


def test_a_huge_input_read_only_in_part_is_put_to_the_user_and_says_so(monkeypatch, capsys):
    call = tool_call(demo_path(), "Write", {"file_path": "/srv/ops-agent/x.py", "content": huge(10_000_000)})
    _, out, err = run("hook", call, monkeypatch, capsys)
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"  # its middle not read: not let through unseen
    reason = answer["permissionDecisionReason"]
    assert "[no-phone-numbers]" in reason and "phone numbers looked for in only its first and last 256 KB" in reason and "not checked against [no-phone-numbers]" in err
    small = tool_call(demo_path(), "Write", {"file_path": "/srv/ops-agent/x.py", "content": huge(100_000)})
    assert run("hook", small, monkeypatch, capsys) == (0, "", "")  # read whole, nothing to say


def test_a_huge_command_read_only_in_part_is_put_to_the_user(monkeypatch, capsys):
    command = "curl -X POST https://api.example.com/orders -d '" + json.dumps({"note": huge(10_000_000)}) + "'"
    _, out, err = run("hook", tool_call(demo_path(), "Bash", {"command": command}), monkeypatch, capsys)
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "[budget-8000]" in reason and "amounts looked for in only the first and last 256 KB of its command" in reason


@pytest.mark.parametrize(("tokens", "shown"), [
    (999, "999"), (1000, "1.0k"), (9_949, "9.9k"), (9_960, "10k"), (200_000, "200k"), (999_499, "999k"), (999_500, "1.0M"),
    (1_000_000, "1.0M"), (1_048_576, "1.0M"),
])
def test_the_status_lines_figures_round_into_the_next_unit_not_past_it(tokens, shown):
    # 999,500 tokens read "1000k" in the status line, where the TUI says 1.0M.
    assert short_tokens(tokens) == shown
