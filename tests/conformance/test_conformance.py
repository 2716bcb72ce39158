"""Every shared real-world fixture through detection, parsing and export.

The fixtures live in ../shared/fixtures (not copied into the repo); where that
folder is absent the tests skip and say why.
"""

from __future__ import annotations

import json

import pytest

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window.session import Session
from ctxtop.tui.cli import main

from ..conftest import SHARED_FIXTURES

# Every file under the fixtures folder, sub-agent transcripts in <session>/subagents/ included.
FIXTURES = sorted(p for p in SHARED_FIXTURES.rglob("*") if p.is_file() and p.suffix != ".md") if SHARED_FIXTURES.is_dir() else []
if not FIXTURES:
    pytest.skip(f"shared fixtures not found at {SHARED_FIXTURES}", allow_module_level=True)

# Formats whose parsers have landed; the rest must fail cleanly until they do.
SUPPORTED = {
    "claude-code": "claude-code",
    "codex": "codex",
    "api-dumps": "openai-messages",
    "gemini-cli": "gemini-cli-json",
    "openhands": "openhands",
    "swe-agent": "swe-agent",
    "inspect-ai": "inspect-ai",
    "openhands-v1": "openhands",
}


def _family(path) -> str:
    """The fixture's folder under ../shared/fixtures (its agent)."""
    return path.relative_to(SHARED_FIXTURES).parts[0]


def _id(path):
    return f"{_family(path)}/{path.name[:40]}"


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_every_fixture_exports_or_fails_in_one_line(path, capsys):
    code = main(["export", str(path)])
    out, err = capsys.readouterr()
    if _family(path) in SUPPORTED:
        assert code == 0, err
        snapshot = json.loads(out)
        assert snapshot["source"]["format"] == SUPPORTED[_family(path)]
        assert snapshot["source"]["diagnostics"]["malformed_lines"] == 0
    else:
        assert code == 2
        assert err.count("\n") == 1 and "not a session log" in err and "Traceback" not in err


def _claude_fixtures():
    return [p for p in FIXTURES if _family(p) == "claude-code"]


@pytest.mark.parametrize("path", _claude_fixtures(), ids=_id)
def test_claude_one_entry_per_response(path):
    records = [json.loads(line) for line in path.read_text().splitlines()]
    own = _claude_own_chain(records)
    message_ids = {r["message"]["id"] for r in records if r.get("type") == "assistant" and own(r)}
    assistants = [e for e in Session.open(path).entries if e.role == "assistant"]
    assert len(assistants) == len(message_ids)  # one merged entry per distinct message id


def test_codex_remote_compaction_fixture():
    path = next(p for p in FIXTURES if "12-54-34" in p.name)
    session = Session.open(path)
    [compaction] = session.compactions()
    assert compaction.kind == "codex_remote" and compaction.opaque
    window = session.window_at(compaction.message)
    # 40 replacement items: 21 user, 15 assistant, 3 developer messages and the encrypted compaction
    kinds = [item.category for item in window.blocks if item.position == -1]
    assert kinds.count("summary") == 1 and len(kinds) >= 40 - 1
    before = session.reported_at(compaction.message - 1)
    first_after = next(e.usage.prompt_tokens for e in session.entries[compaction.message :] if e.usage)
    assert before > 200_000 and first_after == 48_297  # formats.md: "dropped from ~210k to 48,297"
    assert session.reported_at(compaction.message) is None  # no size recorded until the next call


def test_sidechain_file_is_read_as_its_own_conversation():
    path = next(p for p in FIXTURES if "sidechain" in p.name)
    snapshot = build_snapshot(Session.open(path))
    assert snapshot["source"]["messages"] == 2 and snapshot["window"]["reported_tokens"] == 487
    assert snapshot["subagents"]["messages"] == 0


def _supported_fixtures():
    return [p for p in FIXTURES if _family(p) in SUPPORTED]


@pytest.mark.parametrize("path", _supported_fixtures(), ids=_id)
def test_every_strategy_previews_every_supported_fixture(path):
    from ctxtop.context.rules.selection import RuleRequest, select_rules
    from ctxtop.context.strategies import STRATEGIES, preview_all
    from ctxtop.context.strategies.preview import KEPT
    from ctxtop.context.strategies.report import session_frame

    session = Session.open(path)
    constraints = select_rules(session.entries, RuleRequest())
    frame = session_frame(session, None, constraints)
    previews = preview_all(frame)
    assert [p.strategy for p in previews] == list(STRATEGIES)
    for p in previews:
        assert sum(p.categories_after.values()) == p.tokens_after, p.strategy
        assert 0 <= p.cache_prefix_tokens <= frame.total
        assert set(p.constraints) == {c.id for c in constraints}
        # Pair-safe cuts never keep a result whose call went. (Clearing strategies keep every call;
        # Claude Code's re-read files come back as attachments, not as tool results.)
        if p.applies and p.pair_safe and p.strategy not in ("clear_tool_results", "pinned_slot", "openhands_masking", "claude_code"):
            for result in frame.results:
                call = frame.calls.get(frame.blocks[result].block.tool_id)
                if call is not None and p.fates[result] == KEPT:
                    assert p.fates[call] == KEPT, (p.strategy, result, call)


def _claude_own_chain(records):
    """Which records are the file's conversation: its main chain, or, in a sub-agent's own
    transcript (every conversation record a side chain), that side chain."""
    conversation = [r for r in records if r.get("type") in ("user", "assistant")]
    only_sidechain = bool(conversation) and all(r.get("isSidechain") for r in conversation)
    return lambda r: bool(r.get("isSidechain")) == only_sidechain


def _last_reported(path) -> int | None:
    """The prompt size of the last model call, read straight from the fixture (independently of the parsers).
    None where the log records no per-call usage (OpenHands V1 events, SWE-agent, plain message dumps)."""
    family = path.relative_to(SHARED_FIXTURES).parts[0]
    if family == "claude-code":
        records = [json.loads(line) for line in path.read_text().splitlines()]
        own, found = _claude_own_chain(records), None
        for record in records:
            if record.get("type") == "assistant" and own(record) and record["message"].get("model") != "<synthetic>":
                usage = record["message"]["usage"]
                prompt = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
                found = prompt or found
        return found
    if family == "codex":
        found = None
        for line in path.read_text().splitlines():
            record = json.loads(line)
            payload = record.get("payload", {})
            if record.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
                usage = payload["info"]["last_token_usage"]
                if usage["input_tokens"] > 0:  # zeroed snapshots around a remote compaction are not a call
                    found = usage["input_tokens"]
        return found
    if family == "gemini-cli":
        messages = json.loads(path.read_text())["messages"]
        return [m["tokens"]["input"] for m in messages if m.get("type") == "gemini" and m.get("tokens")][-1]
    if family == "openhands":
        found = None
        for event in json.loads(path.read_text()):
            response = (event.get("tool_call_metadata") or {}).get("model_response")
            if "action" in event and isinstance(response, dict) and isinstance(response.get("usage"), dict):
                found = response["usage"]["prompt_tokens"]
            usages = (event.get("llm_metrics") or {}).get("token_usages")
            if "action" in event and not isinstance(response, dict) and usages:
                found = usages[-1]["prompt_tokens"]
        return found
    if family == "inspect-ai":
        if path.suffix == ".eval":
            import zipfile

            archive = zipfile.ZipFile(path)
            sample = json.loads(archive.read(sorted(n for n in archive.namelist() if n.startswith("samples/"))[0]))
        else:
            sample = json.loads(path.read_text())["samples"][0]
        usage = [e for e in sample["events"] if e["event"] == "model"][-1]["output"]["usage"]
        cached = usage.get("input_tokens_cache_read", 0) + usage.get("input_tokens_cache_write", 0)
        # Inspect <= 0.3.x counted cache reads inside input_tokens: there total = input + output.
        if usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]:
            return usage["input_tokens"]
        return usage["input_tokens"] + cached
    return None


@pytest.mark.parametrize("path", _supported_fixtures(), ids=_id)
def test_reported_usage_matches_an_independent_reading_of_the_log(path):
    assert Session.open(path).reported_at() == _last_reported(path)


# Messages each fixture holds (for Inspect logs: the first sample), counted by hand from the files.
NEW_FORMAT_MESSAGES = {
    "agtrace_gemini_session.json": 9,
    "basic.json": 4,
    "basic_gui_mode.json": 10,
    "basic_interactions.json": 6,
    "wrong_initial_state.json": 8,
    "6e44b9__sweagenttestrepo-1c2844.traj": 10,
    "function_calling_simple.traj": 12,
    "2025-05-12T20-28-13-04-00_popularity.json": 3,
    "log_read_sample.eval": 3,
    "UKGovernmentBEIS_2025-05-12T20-27-36-04-00_browser.json": 10,
    "atineoSE_7510150b294841dda032a87239ebdf25_events.json": 103,  # every event is one the model sees
    # Sub-agent transcripts on their own: user records + distinct assistant message ids.
    "agent-a881341.jsonl": 6,
    "agent-acompact-fffbd0.jsonl": 4,
    "agtrace_claude_agent_sidechain.jsonl": 2,
}


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.name in NEW_FORMAT_MESSAGES], ids=_id)
def test_new_formats_count_messages_and_report_usage(path):
    session = Session.open(path)
    assert session.message_count == NEW_FORMAT_MESSAGES[path.name]
    assert session.reported_at(None) == _last_reported(path)
    assert session.parser.diagnostics.malformed_lines == 0
