"""Compaction forensics (issue 22): failure modes, recovery, unsupported claims, generations, cost, replay.

The fixtures in tests/data/forensics are small Claude Code sessions written by its
make_fixtures.py, one compaction each, acting out one row of seed 001's taxonomy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.audit.drift import input_data
from ctxtop.context.audit.forensics.actions import CHANGE, READ, SEARCH, STATE, VERIFY, action_of
from ctxtop.context.audit.forensics.candidate import transcript
from ctxtop.context.audit.forensics.cost import compaction_cost
from ctxtop.context.audit.forensics.history import History
from ctxtop.context.audit.forensics.prices import PRICE_TABLE, price_of
from ctxtop.context.audit.forensics.recovery import is_state_file
from ctxtop.context.output.markdown import cost_line
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.tracker import Tracker
from ctxtop.parsers.model import SUMMARY, USER, Usage
from ctxtop.tui.cli import main
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import DATA, SHARED_FIXTURES

FORENSICS = DATA / "forensics"
SUMMARIZER = f"{sys.executable} {FORENSICS / 'first_rule_summarizer.py'}"


def forensics_of(name: str) -> list[dict]:
    tracker = Tracker.open(str(FORENSICS / name), RuleRequest())
    return [c["forensics"] for c in tracker.snapshot()["compactions"]]


@pytest.fixture(scope="module")
def demo_snapshot() -> dict:
    return Tracker.open(str(demo_path()), RuleRequest(), window=DEMO_WINDOW).snapshot()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- failure modes -----------------------------------------------------------------------------
@pytest.mark.parametrize(("fixture", "modes", "evidence"), [
    # (before, after) message pairs, in the order found
    ("constraint_evaporation.jsonl", ["constraint_evaporation"], [(1, 5)]),
    ("coordinate_loss.jsonl", ["coordinate_loss"], [(2, 9), (4, 11)]),  # the Grep again, the Read again
    ("decision_backtracking.jsonl", ["decision_backtracking"], [(2, 6), (3, 9)]),  # python-dateutil; 放弃引入 Redis 缓存
    ("tool_chain_break.jsonl", ["tool_chain_break"], [(2, 8), (2, 7)]),  # the edit redone; the summary's "Pending: edit fallback.py"
    ("recovery_verified.jsonl", [], []),  # re-reading its own notes is recovery, not coordinate loss
])
def test_each_failure_mode_is_named_with_messages_on_both_sides(fixture, modes, evidence):
    [forensics] = forensics_of(fixture)
    assert [m["mode"] for m in forensics["failure_modes"]] == modes
    found = [e["message"] for m in forensics["failure_modes"] for e in m["evidence"]]
    assert list(zip(found[::2], found[1::2])) == evidence


def test_the_evidence_says_what_happened():
    [forensics] = forensics_of("decision_backtracking.jsonl")
    texts = [e["text"] for e in forensics["failure_modes"][0]["evidence"]]
    assert texts[0].startswith("rejected before: We decided not to add python-dateutil")
    assert texts[1] == "proposed or done again after: The simplest way is to add python-dateutil for the time parsing."
    [forensics] = forensics_of("constraint_evaporation.jsonl")
    assert forensics["failure_modes"][0]["evidence"][1]["text"] == (
        "lost after, dropped by the generation-1 summary; missing ERR_, must")


@pytest.mark.parametrize(("fixture", "identifiers"), [
    ("constraint_evaporation.jsonl", ["ERR_TIMEOUT", "ERR_DENIED"]),
    ("coordinate_loss.jsonl", ["validate_session", "login_handler"]),
    ("tool_chain_break.jsonl", ["test_errors"]),
    ("recovery_partial.jsonl", []),
])
def test_a_tool_calls_parameter_names_are_no_lost_identifiers(fixture, identifiers):
    # file_path, old_string, new_string: the tool's schema, in every call; listing them (and re-injecting
    # them after a compaction) says nothing of the task and crowds out what it lost.
    tracker = Tracker.open(str(FORENSICS / fixture), RuleRequest())
    [compaction] = tracker.snapshot()["compactions"]
    assert compaction["lost_items"]["identifiers"] == identifiers


# --- recovery -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("fixture", "verdict", "actions"), [
    ("recovery_verified.jsonl", "verified", [
        (8, "re-read its state: /repo/notes/handoff.md"), (10, "checked the workspace: git status --short"),
        (12, "ran the tests before changing anything: cd /repo && pytest -q"), (14, "changed first: Edit /repo/src/config/loader.py")]),
    ("recovery_partial.jsonl", "partial", [
        (8, "re-read its state: /repo/notes/handoff.md"), (10, "changed first: Edit /repo/src/config/loader.py")]),
    ("recovery_none.jsonl", "none", [(8, "changed first: Edit /repo/src/config/loader.py")]),  # it read its notes only after
])
def test_recovery_verdicts(fixture, verdict, actions):
    [forensics] = forensics_of(fixture)
    assert forensics["recovery"] == {"verdict": verdict, "actions": [{"message": m, "action": a} for m, a in actions]}


@pytest.mark.parametrize(("path", "state"), [
    ("/repo/handoff.md", True), ("NOTES.md", True), ("/r/session_notes.md", True), ("trace.log", True),
    ("PLAN.md", True), ("docs/implementation-plan.md", True), ("implementationPlan.md", True),
    ("claude-progress.txt", True), ("TODO.md", True), ("todos.json", True), ("MEMORY.md", True), ("交接.md", True),
    # a word inside another word names no state file: these are the project's own code
    ("src/planner.py", False), ("src/explanation.py", False), ("lib/stacktrace.py", False), ("src/airplane.rs", False),
    ("ui/footnote.tsx", False), ("ui/statusbar.tsx", False), ("ui/ProgressBar.tsx", False), ("src/denotes.py", False),
])
def test_a_state_file_is_named_by_a_whole_word(path, state):
    # Reading src/planner.py after a compaction is work, not the agent re-reading its plan.
    assert is_state_file(path, History([])) is state


@pytest.mark.parametrize(("tool", "arguments", "kind", "subject"), [
    ("Read", {"file_path": "/r/a.py"}, READ, "/r/a.py"),
    ("Grep", {"pattern": "validate_session"}, SEARCH, "validate_session"),
    ("Edit", {"file_path": "/r/a.py", "old_string": "a", "new_string": "b"}, CHANGE, "/r/a.py"),
    ("Bash", {"command": "git status"}, STATE, "git status"),
    ("Bash", {"command": "cd /r && python -m pytest -q"}, VERIFY, "cd /r && python -m pytest -q"),
    ("Bash", {"command": "cat notes/plan.md"}, READ, "notes/plan.md"),
    ("Bash", {"command": "rm -rf build"}, CHANGE, "rm -rf build"),
    ("Bash", {"command": "echo done > progress.txt"}, CHANGE, "echo done > progress.txt"),
    ("Bash", {"command": "ls 2>/dev/null"}, SEARCH, "ls 2>/dev/null"),
    ("exec_command", {"cmd": ["bash", "-lc", "git diff"]}, None, None),  # "bash -lc …" is not git itself
    ("send_email", {"to": "a@b.c"}, CHANGE, "send_email"),
    ("query_order", {"id": "PO-1"}, None, None),
])
def test_tool_calls_are_classified(tool, arguments, kind, subject):
    text = json.dumps(arguments)
    action = action_of(1, tool, text, 0, input_data(text))
    assert (action.kind, action.subject) == (kind, subject) if kind else action is None


# --- unsupported claims ----------------------------------------------------------------------------
def test_an_invented_approval_and_identifiers_nowhere_before_are_flagged():
    [forensics] = forensics_of("unsupported_claims.jsonl")
    assert forensics["unsupported_claims"] == [
        {"text": "The user approved deleting the legacy refund module.", "why": "the user approves nothing of the kind before the boundary"},
        {"text": "src/payments/refund_v2.py", "why": "appears nowhere before the boundary"},
        {"text": "RefundManagerV2", "why": "appears nowhere before the boundary"},
    ]  # and not "The user approved renaming the config loader.": the user said "Yes, go ahead and rename…"


BEFORE = [(USER, "Implement spotter-gqc", ""), (USER, "Listen to `mouseup` and `keyup`; run mix compile and mix credo.", ""),
          ("tool_call", 'def create_message_refs(session, ids) do … length(ids)', "")]


@pytest.mark.parametrize("summary, flagged", [
    # Names a summary joins with a slash, each of which the transcript holds: no invention.
    ("Added create_message_refs/2 and kept length/1 checks.", []),
    ("Listeners on mouseup/keyup; ran compile/credo.", []),
    ("Wrote src/payments/refund_v2.py.", ["src/payments/refund_v2.py"]),  # a file path is looked for whole
    ("Added create_invoice/3.", ["create_invoice/3"]),
    # What the summarizer adds after the claim is its own elaboration, not the user's words.
    ('The user requested "Implement spotter-gqc" — the full epic `spotter-gqc: Transcript Annotations`.', []),
    ("The user requested deleting the orders table.", ["The user requested deleting the orders table."]),
    # The transcript's path, which Claude Code appends to every summary, is no claim.
    ("Go on. If you need details, read the full transcript at: /home/u/.claude/projects/p/4f1c.jsonl", []),
])
def test_what_a_summary_says_is_looked_for_in_the_transcript(summary, flagged):
    from ctxtop.context.audit.forensics.claims import unsupported_claims
    from ctxtop.context.rules.facts import normalize

    sources = [(category, text, normalize(text)) for category, text, _ in BEFORE]
    assert [claim["text"] for claim in unsupported_claims(sources, [summary])] == flagged


def test_faithful_summaries_make_no_claims(demo_snapshot):
    assert [c["forensics"]["unsupported_claims"] for c in demo_snapshot["compactions"]] == [[], [], []]


# --- generations and the demo --------------------------------------------------------------------------
def test_demo_generations_are_one_two_three(demo_snapshot):
    assert [c["forensics"]["generation"] for c in demo_snapshot["compactions"]] == [1, 2, 3]


def test_demo_first_compaction_evaporates_the_rules_without_recovery_and_costs_a_rewrite(demo_snapshot):
    first = demo_snapshot["compactions"][0]["forensics"]
    assert [m["mode"] for m in first["failure_modes"]] == ["constraint_evaporation"]
    assert [e["message"] for e in first["failure_modes"][0]["evidence"]][::2] == [1, 2, 3]  # the three rules, where stated
    assert first["recovery"] == {"verdict": "none", "actions": []}
    cost = first["cost"]
    # The demo's first call after the compaction writes its whole prompt (1-hour cache) and reads nothing.
    assert (cost["cache_write_tokens"], cost["cache_write_5m_tokens"], cost["cache_write_1h_tokens"], cost["cache_read_tokens"]) == (
        1351, 0, 1351, 0)
    assert cost["usd"] > 0 and cost["estimated"] and cost["price_table"] == PRICE_TABLE


def test_a_weakened_rule_that_the_next_summary_drops_evaporates_there(demo_snapshot):
    # The demo's budget rule: paraphrased after compaction 1, lost after compaction 2, where `check` fails on it.
    # The forensics of compaction 2 said "no failure mode found" beside that loss.
    second = demo_snapshot["compactions"][1]
    assert (second["constraints"]["budget-8000"]["before"], second["constraints"]["budget-8000"]["after"]) == ("paraphrased", "lost")
    assert second["forensics"]["failure_modes"] == [{"mode": "constraint_evaporation", "evidence": [
        {"message": 205, "text": "paraphrased before: 预算上限 8000 元，超过必须停下来问我"},
        {"message": 306, "text": "lost after, dropped by the generation-2 summary; missing 8000 元, 必须, 上限"}]}]


@pytest.mark.parametrize(("model", "write", "read", "said"), [
    ("claude-sonnet-4-5-20250929", None, None, "not priced: the log gives no cache figures after it"),
    # Codex reports the cached input it read, never a write: "no cache figures" was not so.
    ("gpt-5-codex", None, 250, "not priced: the log gives cache reads but no cache writes after it"),
    ("some-local-model", 300, 0, f"not priced: {PRICE_TABLE} has no price for this model"),
    ("claude-sonnet-4-5-20250929", 300, 0, f"({PRICE_TABLE})"),
])
def test_an_unpriced_compaction_says_why(model, write, read, said):
    # A Sonnet 4.5 session whose log has no cache figures read "has no price for this model", which it has.
    first_call = Usage(prompt_tokens=300, output_tokens=5, cache_write_tokens=write, cache_read_tokens=read)
    assert said in cost_line(compaction_cost(first_call, model, 900, 30))


def test_a_logged_summarizing_call_does_not_call_the_summary_s_own_count_logged():
    # Claude Code 2.1 logs the summarizing call's prompt (169,248 in the real session), not the summary's length:
    # "summarization 172,697 logged tokens" passed ctxtop's count of the summary (3,449) for a logged figure.
    cost = compaction_cost(Usage(33_960, cache_write_tokens=12_497, cache_read_tokens=21_460), "claude-opus-4-6", 167_094,
                           3_449, ("agent-acompact-fffbd0", Usage(169_248, cache_read_tokens=166_758, cache_write_tokens=2_487)))
    assert cost["summarization_tokens"] == 172_697
    assert "summarization 169,248 logged + 3,449 estimated tokens" in cost_line(cost)


def test_markdown_and_check_show_the_forensics(capsys):
    code, out, _ = run(capsys, "export", "--demo", "--format", "md")
    assert code == 0
    assert "### Compaction forensics" in out
    assert "**Compaction at message 204** — generation 1; failure modes: constraint\\_evaporation; recovery: **none**" in out
    assert "| constraint\\_evaporation | 205 | paraphrased after, dropped by the generation-1 summary; missing 8000 元 |" in out
    code, out, _ = run(capsys, "check", "--demo")
    assert code == 1
    assert "forensics compaction at message 204: generation 1; constraint_evaporation; recovery none" in out


# --- cost -----------------------------------------------------------------------------------------------
def test_cost_from_known_cache_fields():
    tracker = Tracker.open(str(FORENSICS / "cache_cost.jsonl"), RuleRequest())
    [audit] = tracker.audit.compactions
    summary_tokens = sum(b.tokens for b in tracker.window_at(audit.after_message).blocks if b.category == SUMMARY)
    cost = tracker.snapshot()["compactions"][0]["forensics"]["cost"]
    assert {k: cost[k] for k in ("cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_read_tokens")} == {
        "cache_write_tokens": 12_000, "cache_write_5m_tokens": 2_000, "cache_write_1h_tokens": 10_000, "cache_read_tokens": 3_000}
    assert cost["summarization_tokens"] == 50_000 + summary_tokens and cost["estimated"]
    # claude-sonnet-4-5: $3 input, $15 output per million; writes ×1.25 (5m) and ×2 (1h), reads ×0.1.
    summarizing = (50_000 * 3 + summary_tokens * 15) / 1e6
    assert cost["usd"] == pytest.approx((2_000 * 1.25 + 10_000 * 2 + 3_000 * 0.1) * 3e-6 + summarizing, abs=1e-6)
    premium = (2_000 * 1.15 + 10_000 * 1.9) * 3e-6 + summarizing
    assert cost["payback_turns"] == pytest.approx(premium / ((50_000 - 15_000) * 0.1 * 3e-6), abs=0.05)


def test_a_compaction_that_calls_no_model_costs_no_summarizing_call():
    # Claude Code's microcompact swaps old tool results for a placeholder without a model call (and Cline's
    # truncation drops messages): only the cache re-write is paid, not a summary of the whole window.
    tracker = Tracker.open(str(DATA / "claude_microcompact.jsonl"), RuleRequest())
    [compaction] = tracker.snapshot()["compactions"]
    cost = compaction["forensics"]["cost"]
    assert (cost["summarization_tokens"], cost["estimated"], cost["summarization_call"]) == (0, False, None)
    # claude-sonnet-4-5: the re-write (unsplit: 5-minute, ×1.25) and the read (×0.1) at $3 per million.
    assert cost["usd"] == pytest.approx((20 * 1.25 + 300 * 0.1) * 3e-6, abs=1e-6)
    assert compaction_cost(Usage(320, cache_write_tokens=20, cache_read_tokens=300), "claude-sonnet-4-5", 600, None,
                           calls_model=False)["summarization_tokens"] == 0


MAROT = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.mark.skipif(not MAROT.is_file(), reason="the shared fixtures are absent (../shared/fixtures)")
def test_a_summarizing_call_that_arrives_after_its_compaction_prices_it_as_a_fresh_read_does(tmp_path):
    """A session copied or synced while followed (the log first, then its folder): the compaction sub-agent's
    transcript came after the compaction was audited, and the TUI's compaction view kept its estimate ($1.06,
    payback 15.6 turns) where `export` priced the logged call ($0.33, 4.7 turns)."""
    log = tmp_path / MAROT.name
    log.write_bytes(MAROT.read_bytes())
    tracker = Tracker.open(str(log), RuleRequest(), live=True)
    assert tracker.snapshot()["compactions"][0]["forensics"]["cost"]["estimated"]
    (log.with_suffix("") / "subagents").mkdir(parents=True)
    for copied in (MAROT.with_suffix("") / "subagents").iterdir():
        (log.with_suffix("") / "subagents" / copied.name).write_bytes(copied.read_bytes())
    tracker.poll()
    fresh = Tracker.open(str(log), RuleRequest())
    cost = tracker.snapshot()["compactions"][0]["forensics"]["cost"]
    assert cost == fresh.snapshot()["compactions"][0]["forensics"]["cost"] and not cost["estimated"]


@pytest.mark.skipif(not MAROT.is_file(), reason="the shared fixtures are absent (../shared/fixtures)")
def test_a_logged_summarizing_call_is_priced_as_logged():
    """Claude Code 2.1 runs the summarization as a sub-agent (agent-acompact-*): its call is in the
    log, so the cost is no longer an estimate. Expected figures come from the transcript's raw JSON."""
    transcript = MAROT.with_suffix("") / "subagents" / "agent-acompact-fffbd0.jsonl"
    logged = [json.loads(line) for line in transcript.read_text().splitlines()]
    [usage] = [r["message"]["usage"] for r in logged if isinstance(r.get("message"), dict) and r["message"].get("usage")]
    tracker = Tracker.open(str(MAROT), RuleRequest())
    [compaction] = tracker.snapshot()["compactions"]
    cost = compaction["forensics"]["cost"]
    prompt = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    assert prompt == 169_248
    assert cost["summarization_call"] == {"source": "agent-acompact-fffbd0", "prompt_tokens": prompt,
                                          "cache_read_tokens": 166_758, "cache_write_tokens": 2_487}
    assert not cost["estimated"]
    summary_tokens = cost["summarization_tokens"] - prompt
    assert 0 < summary_tokens < 10_000  # the summary, counted: not the mid-stream output_tokens the transcript logs
    # claude-opus-4-6: $5 input, $25 output; its prompt written to the 1-hour cache (×2) and read (×0.1).
    one_hour = usage["cache_creation"]["ephemeral_1h_input_tokens"]
    summarizing = (usage["input_tokens"] + one_hour * 2 + usage["cache_read_input_tokens"] * 0.1) * 5e-6 + summary_tokens * 25e-6
    rewrite = cost["cache_write_1h_tokens"] * 2 * 5e-6 + cost["cache_read_tokens"] * 0.1 * 5e-6
    assert cost["cache_write_5m_tokens"] == 0
    assert cost["usd"] == pytest.approx(rewrite + summarizing, abs=1e-6)


@pytest.mark.skipif(not MAROT.is_file(), reason="the shared fixtures are absent (../shared/fixtures)")
def test_the_real_summary_is_held_to_what_the_transcript_says(monkeypatch):
    """Checked by hand against the log: the five Elixir functions name/arity are defined in the agent's Write of
    session_live.ex, mouseup and keyup are listened to, the user's first message is "Implement spotter-gqc", and the
    path at the end is where Claude Code says the transcript is. Two claims stand: nothing before the boundary
    asks for every task to be pushed, and "JavaScript" is first written by the summary."""
    monkeypatch.setenv("CTXTOP_NO_CACHE", "1")
    [compaction] = Tracker.open(str(MAROT), RuleRequest()).snapshot()["compactions"]
    assert [c["text"] for c in compaction["forensics"]["unsupported_claims"]] == [
        "The user wants all tasks in the dependency chain completed, committed, and pushed.", "JavaScript"]


CODEX_REMOTE = SHARED_FIXTURES / "codex" / "localpush_rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"


@pytest.mark.skipif(not CODEX_REMOTE.is_file(), reason="the shared fixtures are absent (../shared/fixtures)")
def test_codex_cache_reads_after_a_compaction_come_from_the_turn_that_logs_them():
    """Codex logs a call's usage after the items it streamed (reasoning, messages, tool calls): the first
    call after a compaction is the first token_count with a prompt after the `compacted` record."""
    records = [json.loads(line) for line in CODEX_REMOTE.read_text().splitlines()]
    compacted = next(i for i, r in enumerate(records) if r["type"] == "compacted")
    first = next(r["payload"]["info"]["last_token_usage"] for r in records[compacted:]
                 if r["payload"].get("type") == "token_count" and r["payload"]["info"]["last_token_usage"]["input_tokens"])
    [compaction] = Tracker.open(str(CODEX_REMOTE), RuleRequest()).snapshot()["compactions"]
    cost = compaction["forensics"]["cost"]
    assert cost["cache_read_tokens"] == first["cached_input_tokens"] == 22_912
    assert cost["estimated"] and cost["summarization_tokens"] == compaction["pre_tokens"]  # a remote compaction: not logged


def test_unknown_models_get_tokens_only():
    usage = Usage(15_000, cache_write_tokens=12_000, cache_read_tokens=3_000)
    cost = compaction_cost(usage, "gpt-5-codex", 50_000, 40)
    assert (cost["cache_write_tokens"], cost["usd"], cost["payback_turns"]) == (12_000, None, None)
    assert compaction_cost(None, "claude-sonnet-4-5", None, None)["usd"] is None  # no call after it yet
    assert price_of("claude-opus-4-5-20251101").input == 5 and price_of("claude-opus-4-20250514").input == 15
    assert price_of("claude-sonnet-4-5[1m]").output == 15 and price_of(None) is None


# --- replay-compaction -----------------------------------------------------------------------------------
def test_replay_with_a_local_summarizer_that_keeps_one_rule_and_drops_others(capsys):
    code, out, _ = run(capsys, "replay-compaction", "--demo", "--compaction", "1", "--summarizer", SUMMARIZER, "--json")
    assert code == 0
    result = json.loads(out)
    assert (result["compaction"], result["message"]) == (1, 204)
    assert result["real"]["constraints"] == {"budget-8000": "paraphrased", "wecom-only": "lost", "no-phone-numbers": "lost"}
    assert result["candidate"]["constraints"] == {"budget-8000": "kept", "wecom-only": "lost", "no-phone-numbers": "lost"}
    assert result["candidate_loses"] == ["wecom-only", "no-phone-numbers"]
    assert result["candidate"]["tokens"] < result["real"]["tokens"]
    assert result["candidate"]["summary"].startswith("Summary of the conversation so far.")
    code, out, _ = run(capsys, "replay-compaction", "--demo", "--compaction", "1", "--summarizer", SUMMARIZER)
    assert code == 0
    assert "budget-8000         kept    paraphrased  kept" in out
    # Each side's lost facts stop at the audit's 50 numbers: counted "at least", not as a total to compare.
    assert re.search(r"facts lost\s+≥52\s+≥52", out)


def test_a_summarizer_that_leaves_a_child_holding_its_output_is_read_and_cleaned_up(capsys, tmp_path):
    import time

    marker = f"ctxtop-test-{tmp_path.name}"
    script = tmp_path / "leaves_a_child.sh"
    child = f"{sys.executable} -c 'import time; time.sleep(600)' {marker}"  # (the marker names it for pgrep)
    script.write_text(f"#!/bin/sh\n{child} &\ncat > /dev/null\necho Summary: nothing kept.\n")
    script.chmod(0o755)
    started = time.monotonic()
    code, out, err = run(capsys, "replay-compaction", "--demo", "--compaction", "1", "--summarizer", str(script), "--json")
    assert code == 0, err
    assert json.loads(out)["candidate"]["summary"] == "Summary: nothing kept."  # what it printed, though its child held the pipe
    assert time.monotonic() - started < 8  # not a wait for the pipe to close
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout == "", "its child was left running"


def test_check_with_a_summarizer_fails_when_the_candidate_loses_a_rule(capsys, tmp_path):
    code, out, _ = run(capsys, "check", "--demo", "--summarizer", SUMMARIZER)
    assert code == 1
    assert "FAIL compaction at message 204: the candidate summary lost [wecom-only]" in out
    # A session whose compaction keeps its rule, and a summarizer that keeps it too: check passes.
    code, out, _ = run(capsys, "check", str(FORENSICS / "cache_cost.jsonl"), "--pin", "Summarize the incident reports.",
                       "--summarizer", f"{sys.executable} -c \"print('Summarize the incident reports.')\"")
    assert code == 0, out


def test_the_summarizer_reads_the_replaced_window_as_json_messages():
    tracker = Tracker.open(str(demo_path()), RuleRequest(), window=DEMO_WINDOW)
    data = transcript(tracker.window_at(203), 204, 1, tracker.session.model)
    assert data["schema"] == "ctxtop.replay-transcript/1"
    assert data["compaction"] == {"number": 1, "message": 204, "model": "claude-sonnet-4-5-20250929"}
    assert data["messages"][0] == {"message": 1, "role": "user", "category": "user", "tool_name": None,
                                   "content": "预算上限 8000 元，超过必须停下来问我"}
    assert {m["role"] for m in data["messages"]} == {"user", "assistant", "tool"}


@pytest.mark.parametrize(("summarizer", "options", "error"), [
    (f"{sys.executable} -c \"import sys; sys.exit(3)\"", [], "the summarizer exited with status 3"),
    (f"{sys.executable} -c \"import time; time.sleep(30)\"", ["--summarizer-timeout", "0.5"], "the summarizer took longer than 0.5 s"),
    (f"{sys.executable} -c \"print('x' * 5000)\"", ["--summarizer-max-bytes", "1000"], "the summarizer wrote more than 1,000 bytes"),
    ("/nonexistent/summarizer", [], "cannot run the summarizer"),
    ("'unbalanced", [], "cannot split the summarizer command"),
])
def test_a_summarizer_that_fails_is_one_line_and_exit_2(capsys, summarizer, options, error):
    code, out, err = run(capsys, "replay-compaction", "--demo", "--compaction", "1", "--summarizer", summarizer, *options)
    assert code == 2 and out == ""
    assert err.startswith(f"ctxtop: error: {error}") and err.count("\n") == 1


def test_the_summarizer_runs_without_a_shell_unless_asked(capsys, tmp_path):
    target = tmp_path / "written"
    code, out, _ = run(capsys, "replay-compaction", "--demo", "--compaction", "1", "--summarizer", f"echo kept > {target}", "--json")
    assert code == 0 and not target.exists()  # ">" went to echo as an argument
    assert json.loads(out)["candidate"]["summary"] == f"kept > {target}"
    code, _, _ = run(capsys, "replay-compaction", "--demo", "--compaction", "1", "--summarizer", f"cat > /dev/null; echo kept > {target}; echo s",
                     "--shell")
    assert code == 0 and target.read_text() == "kept\n"


@pytest.mark.parametrize(("argv", "error"), [
    (["--compaction", "4"], "--compaction must be between 1 and 3"),
    (["--compaction", "0"], "--compaction must be between 1 and 3"),
])
def test_a_compaction_out_of_range_is_a_usage_error(capsys, argv, error):
    code, _, err = run(capsys, "replay-compaction", "--demo", "--summarizer", SUMMARIZER, *argv)
    assert code == 2 and error in err


def test_a_message_number_is_no_option_of_replay_compaction(capsys):
    # --at was taken and ignored (even --at 99999 of 390 messages): the compaction is chosen by --compaction alone,
    # as check and watch, which read the whole session, refuse --at too.
    code, out, err = run(capsys, "replay-compaction", "--demo", "--at", "5", "--compaction", "1", "--summarizer", SUMMARIZER)
    assert (code, out) == (2, "") and "unrecognized arguments: --at" in err and err.count("\n") == 1


def test_a_compaction_with_no_summary_has_none_to_replay(capsys, tmp_path):
    # A microcompact cleared tool results and summarized nothing: its "summary" was taken as the summarizer's rival,
    # and check --summarizer ran the summarizer on it too.
    log = str(DATA / "claude_microcompact.jsonl")
    code, out, err = run(capsys, "replay-compaction", log, "--compaction", "1", "--summarizer", SUMMARIZER)
    assert code == 2 and not out and "compaction 1 is a microcompact" in err and err.count("\n") == 1
    ran = tmp_path / "ran"
    code, out, _ = run(capsys, "check", log, "--json", "--summarizer", f"touch {ran}; echo summary", "--shell")
    assert not ran.exists() and json.loads(out)["summarizer"] == []


def test_fixtures_are_what_their_script_writes(tmp_path):
    script = (FORENSICS / "make_fixtures.py").read_text()
    copy = tmp_path / "make_fixtures.py"
    copy.write_text(script)
    subprocess.run([sys.executable, str(copy)], check=True)
    for name in sorted(p.name for p in FORENSICS.glob("*.jsonl")):
        assert (tmp_path / name).read_text() == (FORENSICS / name).read_text(), name


def test_the_compaction_view_shows_the_forensics(capsys):
    from ctxtop.tui.widgets.compaction import rules_text

    tracker = Tracker.open(str(demo_path()), RuleRequest(), window=DEMO_WINDOW)
    view = tracker.compaction_view(1)
    assert view["forensics"]["generation"] == 1 and view["forensics"]["recovery"]["verdict"] == "none"
    shown = rules_text(view).plain
    assert "Forensics: generation 1; constraint_evaporation; recovery none" in shown
    assert "cost: cache write 1,351 (5m 0, 1h 1,351)" in shown
    code, out, _ = run(capsys, "export", "--demo", "--compaction", "1", "--format", "md")
    assert code == 0 and "### Forensics" in out and "recovery: **none**" in out



@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab/c.d_1\u00e9", min_size=1, max_size=8), max_size=30))
def test_the_coordinates_inside_another_are_left_out_as_a_search_per_pair_would(tokens):
    from ctxtop.context.audit.forensics.claims import _outermost

    pairwise = [t for t in dict.fromkeys(tokens) if len(t) >= 3 and not any(t != other and t in other for other in tokens)]
    assert _outermost(tokens) == pairwise
