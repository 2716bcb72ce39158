"""Property tests: hostile bytes and mutated real records never crash a parser, and totals stay consistent.

Every parser is fed (a) arbitrary bytes and (b) real records from tests/data
with fields dropped, retyped or replaced by random JSON. The only allowed
failure is the documented UnknownFormat; everything else must parse, count its
diagnostics, and give a session whose window and strategy totals add up.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxtop import parsers
from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.strategies import preview_all
from ctxtop.context.strategies.report import session_frame
from ctxtop.context.window.session import Session
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.numbers import MAX_COUNT
from ctxtop.parsers.registry import PARSERS
from ctxtop.tui.cli import main

from ..conftest import DATA

COUNTER = TokenCounter()
# 150 examples per target in the normal run; CTXTOP_FUZZ_EXAMPLES=1500 for a deeper one.
EXAMPLES = int(os.environ.get("CTXTOP_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSONL_SEEDS = {
    "claude-code": ["claude_compact.jsonl", "claude_microcompact.jsonl"],
    "codex": ["codex_local_compaction.jsonl", "codex_remote_compaction.jsonl"],
    "openai-messages": ["openai_messages.jsonl"],
    "gemini-cli": ["gemini_chat.jsonl"],
}


def _records(files: list[str]) -> list:
    found = []
    for file in files:
        for line in (DATA / file).read_text().splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                pass  # the fixtures hold a few malformed lines on purpose
    return found


RECORDS = {name: _records(files) for name, files in JSONL_SEEDS.items()}

# Text an attacker (or a writer cut off mid-emoji) puts in a log: markup, escape sequences, C1
# controls, bidi overrides, lone surrogates.
HOSTILE_PIECES = ["[/]", '[x="]', "[link=https://evil.example/x]", "[@click=app.quit]", "[bold]", "\x1b]0;pwned\x07",
                  "\x1b[2J", "\x1b]52;c;SGVsbG8=\x07", "\x9b31m", "\x9d0;t\x9c", "\u202e", "\u2066", "\x7f", "\x85",
                  "\ud800", "\udfff", "<|endoftext|>"]
hostile_text = st.lists(st.sampled_from(HOSTILE_PIECES) | st.text(max_size=6), min_size=1, max_size=6).map("".join)
numbers = (st.integers(-(2**70), 2**70) | st.sampled_from([2**64 - 1, 2**63, -1, 10**30, 2**53])
           | st.floats(allow_nan=False))


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


json_values = st.recursive(
    st.none() | st.booleans() | numbers | st.text(max_size=40) | hostile_text
    | st.integers(150, 400).map(nested),  # deep inside a valid record, around the depth limit
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12) | hostile_text, children, max_size=4),
    max_leaves=12,
)
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\u202e", "\u2066")


def check_session(parser) -> None:
    """What must hold of any parse: consistent diagnostics, numbered entries, totals that add up."""
    diagnostics = parser.diagnostics
    assert diagnostics.malformed_lines >= 0 and diagnostics.unknown_records >= 0
    assert [e.index for e in parser.entries] == list(range(1, len(parser.entries) + 1))
    session = Session(parser, counter=COUNTER)
    for at in {0, len(parser.entries) // 2, len(parser.entries)}:
        window = session.window_at(at)
        totals = window.categories()
        assert all(t.tokens >= 0 and t.blocks >= 0 for t in totals.values())
        assert window.estimated_tokens == sum(b.tokens for b in window.blocks)
        assert sum(t.blocks for t in totals.values()) == len(window.blocks)
    frame = session_frame(session, None, [])
    for preview in preview_all(frame):
        assert preview.tokens_after >= 0
        assert sum(preview.categories_after.values()) == preview.tokens_after
    # Numbers are counts or nothing; no text holds a lone surrogate; every output can be written.
    for entry in parser.entries:
        usage = entry.usage
        if usage is not None:
            for name in ("prompt_tokens", "output_tokens", "reasoning_tokens", "context_window", "cache_write_tokens", "cache_read_tokens"):
                value = getattr(usage, name)
                assert value is None or (type(value) is int and 0 <= value < MAX_COUNT), (name, value)
        for block in entry.blocks:
            block.text.encode("utf-8")
    assert parser.meta.context_window is None or (type(parser.meta.context_window) is int and parser.meta.context_window > 0)
    snapshot = build_snapshot(session)
    document = json_document(snapshot)
    assert not any(c in document for c in TERMINAL_CONTROLS)
    render_markdown(snapshot).encode("utf-8")


@pytest.mark.parametrize("name", sorted(PARSERS))
@SETTINGS
@given(data=st.binary(max_size=2000))
def test_arbitrary_bytes(name, data):
    try:
        parser = parsers.parse(data, name)
    except parsers.UnknownFormat:
        return
    check_session(parser)


@SETTINGS
@given(data=st.binary(max_size=2000))
def test_detection_on_arbitrary_bytes(data):
    try:
        name = parsers.detect(data)
    except parsers.UnknownFormat:
        return
    assert name in PARSERS


def mutate(record, path_choices, value):
    """Replace (or delete, when value is the marker) one nested field of a copy of ``record``."""
    record = json.loads(json.dumps(record))
    node = record
    for step in path_choices:
        if isinstance(node, dict) and node:
            keys = sorted(node)
            key = keys[step % len(keys)]
            if not isinstance(node[key], (dict, list)) or step % 3 == 0:
                if value == "__delete__":
                    del node[key]
                else:
                    node[key] = value
                return record
            node = node[key]
        elif isinstance(node, list) and node:
            index = step % len(node)
            if not isinstance(node[index], (dict, list)) or step % 3 == 0:
                node[index] = None if value == "__delete__" else value
                return record
            node = node[index]
        else:
            return record
    return record


@pytest.mark.parametrize("name", sorted(RECORDS))
@SETTINGS
@given(
    picks=st.lists(st.tuples(st.integers(0, 10_000), st.lists(st.integers(0, 50), min_size=1, max_size=6),
                             st.one_of(st.just("__delete__"), json_values)), min_size=1, max_size=12),
    torn=st.booleans(),
)
def test_mutated_real_records(name, picks, torn):
    records = RECORDS[name]
    lines = []
    for pick, path, value in picks:
        lines.append(json.dumps(mutate(records[pick % len(records)], path, value)))
    data = ("\n".join(lines) + ("" if torn else "\n")).encode()
    parser = parsers.parse(data, name)
    assert parser.diagnostics.malformed_lines <= len(lines)
    check_session(parser)


@pytest.mark.parametrize("name", sorted(RECORDS))
# capsysbinary is emptied by each readouterr(), so sharing it between examples is safe.
@settings(max_examples=max(10, EXAMPLES // 5), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(file_name=hostile_text, pin_id=hostile_text, pin_text=hostile_text, picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=6))
def test_hostile_file_names_and_pin_ids_through_the_cli(name, file_name, pin_id, pin_text, picks, capsysbinary):
    """Markup, escape codes, C1, bidi and surrogates in a log's file name and a pin's id and text: every
    command answers in clean lines (exit 0, 1 or 2), and no output holds a control sequence raw."""
    records = RECORDS[name]
    safe_name = file_name.replace("/", "_").replace("\x00", "_").encode("utf-8", "replace")[:200]
    with tempfile.TemporaryDirectory() as folder:
        log = os.path.join(os.fsencode(folder), safe_name + b".jsonl")
        with open(log, "w") as handle:
            handle.write("".join(json.dumps(records[p % len(records)]) + "\n" for p in picks))
        pins = Path(folder, "pins.toml")
        pins.write_text(f"[[pin]]\nid = {json.dumps(pin_id)}\ntext = {json.dumps(pin_text + ' never do it')}\n")
        for argv in (["check", "--pins", str(pins)], ["check", "--json", "--pins", str(pins)], ["export"], ["export", "--format", "md"]):
            code = main([*argv, os.fsdecode(log)])
            out, err = capsysbinary.readouterr()
            assert code in (0, 1, 2)
            text = (out + err).decode("utf-8", "replace")
            assert "internal error" not in text and "Traceback" not in text, text
            assert err.count(b"\n") <= 1 or code != 2
            assert not any(c in text for c in TERMINAL_CONTROLS), (argv, text)
