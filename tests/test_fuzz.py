"""Property tests: hostile bytes and mutated real records never crash a parser, and totals stay consistent.

Every parser is fed (a) arbitrary bytes and (b) real records from tests/data
with fields dropped, retyped or replaced by random JSON. The only allowed
failure is the documented UnknownFormat; everything else must parse, count its
diagnostics, and give a session whose window and strategy totals add up.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxtop import parsers
from ctxtop.context.strategies import preview_all
from ctxtop.context.strategies.report import session_frame
from ctxtop.context.window.session import Session
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.registry import PARSERS

from .conftest import DATA

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

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


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
