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

from .conftest import SHARED_FIXTURES

FIXTURES = sorted(p for p in SHARED_FIXTURES.glob("*/*") if p.is_file()) if SHARED_FIXTURES.is_dir() else []
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
}


def _id(path):
    return f"{path.parent.name}/{path.name[:40]}"


@pytest.mark.parametrize("path", FIXTURES, ids=_id)
def test_every_fixture_exports_or_fails_in_one_line(path, capsys):
    code = main(["export", str(path)])
    out, err = capsys.readouterr()
    if path.parent.name in SUPPORTED:
        assert code == 0, err
        snapshot = json.loads(out)
        assert snapshot["source"]["format"] == SUPPORTED[path.parent.name]
        assert snapshot["source"]["diagnostics"]["malformed_lines"] == 0
    else:
        assert code == 2
        assert err.count("\n") == 1 and "not a session log" in err and "Traceback" not in err


def _claude_fixtures():
    return [p for p in FIXTURES if p.parent.name == "claude-code"]


@pytest.mark.parametrize("path", _claude_fixtures(), ids=_id)
def test_claude_reported_tokens_equal_last_main_chain_usage(path):
    last_usage, message_ids = None, set()
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "assistant" and not record.get("isSidechain"):
            message = record["message"]
            message_ids.add(message["id"])
            usage = message["usage"]
            last_usage = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
    session = Session.open(path)
    assert session.reported_at() == last_usage
    assistants = [e for e in session.entries if e.role == "assistant"]
    assert len(assistants) == len(message_ids)  # one merged entry per distinct message id


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.parent.name == "codex"], ids=_id)
def test_codex_reported_tokens_equal_last_usable_token_count(path):
    last = None
    for line in path.read_text().splitlines():
        record = json.loads(line)
        payload = record.get("payload", {})
        if record.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            usage = payload["info"]["last_token_usage"]
            if usage["input_tokens"] > 0:
                last = usage["input_tokens"]
    session = Session.open(path)
    assert session.reported_at() == last


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


def test_sidechain_file_reports_subagent_totals():
    path = next(p for p in FIXTURES if "sidechain" in p.name)
    snapshot = build_snapshot(Session.open(path))
    assert snapshot["source"]["messages"] == 0
    assert snapshot["subagents"]["messages"] == 2 and snapshot["subagents"]["tokens"] > 0


def _supported_fixtures():
    return [p for p in FIXTURES if p.parent.name in SUPPORTED]


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


def _last_reported(path) -> int | None:
    """The prompt size of the last model call, read straight from the fixture (independently of the parsers)."""
    folder = path.parent.name
    if folder == "gemini-cli":
        messages = json.loads(path.read_text())["messages"]
        return [m["tokens"]["input"] for m in messages if m.get("type") == "gemini" and m.get("tokens")][-1]
    if folder == "openhands":
        found = None
        for event in json.loads(path.read_text()):
            response = (event.get("tool_call_metadata") or {}).get("model_response")
            if "action" in event and isinstance(response, dict) and isinstance(response.get("usage"), dict):
                found = response["usage"]["prompt_tokens"]
            usages = (event.get("llm_metrics") or {}).get("token_usages")
            if "action" in event and not isinstance(response, dict) and usages:
                found = usages[-1]["prompt_tokens"]
        return found
    if folder == "inspect-ai":
        if path.suffix == ".eval":
            import zipfile

            archive = zipfile.ZipFile(path)
            sample = json.loads(archive.read(sorted(n for n in archive.namelist() if n.startswith("samples/"))[0]))
        else:
            sample = json.loads(path.read_text())["samples"][0]
        usage = [e for e in sample["events"] if e["event"] == "model"][-1]["output"]["usage"]
        return usage["input_tokens"] + usage.get("input_tokens_cache_read", 0) + usage.get("input_tokens_cache_write", 0)
    return None


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
}


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.name in NEW_FORMAT_MESSAGES], ids=_id)
def test_new_formats_count_messages_and_report_usage(path):
    session = Session.open(path)
    assert session.message_count == NEW_FORMAT_MESSAGES[path.name]
    assert session.reported_at(None) == _last_reported(path)
    assert session.parser.diagnostics.malformed_lines == 0
