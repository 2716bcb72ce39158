"""The audit's faster readings of a window's text find exactly what the plain ones do.

``WindowText.occurrences`` searches all blocks at once and ``lost_items`` stops
reading a window once each kind of fact has its MAX_LOST_ITEMS: both are held
here to the block-by-block readings they replace, on the demo and the real logs.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxtop.context.audit import lost
from ctxtop.context.audit.forensics import claims
from ctxtop.context.audit.lost import fact_candidates, lost_items, missing_facts
from ctxtop.context.audit.sentences import sentences
from ctxtop.context.rules.constraints import WindowText, make_constraint
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.window.replay import Window, WindowBlock
from ctxtop.context.window.session import Session
from ctxtop.parsers.model import INJECTED, USER, Block, Entry
from ctxtop.tui.demo import demo_path

from ..conftest import SHARED_FIXTURES

LOGS = [
    demo_path(),
    SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    SHARED_FIXTURES / "codex" / "localpush_rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
]


def _windows(path) -> tuple[Session, list[WindowText]]:
    if not path.exists():
        pytest.skip(f"{path.name} not in the shared fixtures")
    session = Session.open(path)
    count = len(session.entries)
    # Windows around every compaction and a few in between: the texts an audit pairs, and others.
    at = {m for c in session.compactions() for m in (c.message - 1, c.message, c.message + 1)} | {count * k // 6 for k in range(1, 7)}
    return session, [WindowText(session.window_at(m, exact=False)) for m in sorted(m for m in at if 1 <= m <= count)]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:24])
@pytest.mark.parametrize("cap", [lost.MAX_LOST_ITEMS, 2])
def test_lost_items_read_lazily_are_the_candidates_missing_after(path, cap, monkeypatch):
    monkeypatch.setattr(lost, "MAX_LOST_ITEMS", cap)  # a small cap stops early in every kind
    _session, windows = _windows(path)
    found_any = False
    for before, after in itertools.permutations(windows[:8], 2):
        found = lost_items(before, after)
        assert found == missing_facts(fact_candidates(before), after)
        found_any |= any(found.values())
    assert found_any  # the comparison holds on real findings, not only on empty ones


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:24])
def test_verbatim_search_of_the_joined_blocks_finds_each_block_that_holds_the_rule(path):
    session, windows = _windows(path)
    constraints = select_rules(session.entries, RuleRequest())
    # Texts of the log itself, so that many are found, in many blocks.
    constraints += [make_constraint(text, "pin") for text in ("the", "import", "ctxtop", "e", "ok")]
    hits = 0
    for text in windows:
        for constraint in constraints:
            verbatim, _restated = text.occurrences(constraint)
            expected = [p for p, (_, _, normalized) in enumerate(text.blocks) if constraint.normalized and constraint.normalized in normalized]
            assert verbatim == expected
            hits += len(verbatim)
    assert hits > 0


def test_paths_lost_are_paths_of_the_task_not_devices_or_fragments():
    from ctxtop.context.audit.lost import _PATH

    text = ("ran make 2>/dev/null; row/col in /tmp; edited /home/dev/orders/api.py, ~/notes, ./build and "
            "/srv/ops-agent/config; src/app/main.py")
    assert _PATH.findall(text) == ["/home/dev/orders/api.py", "~/notes", "./build", "/srv/ops-agent/config", "src/app/main.py"]


@pytest.mark.parametrize("text, paths", [
    # A home folder named by an address (SSSD's /home/%u@%d on a domain-joined machine): one path, which --redact
    # masks whole, where "/home/alice" and "corp.example.com/proj/x.py" were two, which put the address back together.
    ("cd /home/alice@corp.example.com/proj/x.py", ["/home/alice@corp.example.com/proj/x.py"]),
    ("see node_modules/@babel/core/lib/index.js", ["node_modules/@babel/core/lib/index.js"]),
    ("git@github.com:org/repo.git and ~/x@y/notes", ["org/repo.git", "~/x@y/notes"]),
])
def test_a_path_is_never_cut_at_an_at_sign(text, paths):
    assert lost._PATH.findall(text) == paths


# The fact patterns as first written: what lost_items' quicker ones must find.
PLAIN_FACT_PATTERNS = {
    "paths": re.compile(r"(?:~|\.{1,2})?[\w.\-@]*/[\w.\-/@]+\.\w+|/(?!dev/)[\w.\-@]+/[\w.\-/@]+|~/[\w.\-/@]+|\.{1,2}/[\w.\-/@]{3,}"),
    "identifiers": re.compile(r"\b(?<!\w-)(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z]+[A-Z][A-Za-z0-9]+)\b"),
    "numbers": re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|元|美元|USD|KB|MB|GB|ms|秒|分钟|小时|天|days?|hours?|tokens?)(?![A-Za-z])",
                          re.IGNORECASE),
}
QUICK_FACT_PATTERNS = {"paths": lost._PATH, "identifiers": lost._IDENT, "numbers": lost._NUMBER_UNIT}
FACT_ALPHABET = ["a", "Z", "b_", "é", "٣", "1", "2,5", ".", "..", "/", "~", "~/", "-", "--", "@", " ", "\n", "%", "元", "KB", "ms", "days",
                 "Tokens", "dev/", "x.py"]


@pytest.mark.parametrize("kind", list(PLAIN_FACT_PATTERNS))
@settings(max_examples=1000, deadline=None)
@given(text=st.lists(st.sampled_from(FACT_ALPHABET), max_size=30).map("".join))
@example(text="/é\né.. .1~/..1b.a1--~a.ab_  -")  # a ~ right after a name: its path is tried there (found by a fuzzer)
def test_the_quicker_fact_patterns_find_what_the_plain_ones_find(kind, text):
    assert QUICK_FACT_PATTERNS[kind].findall(text) == PLAIN_FACT_PATTERNS[kind].findall(text)


@pytest.mark.parametrize("kind", list(PLAIN_FACT_PATTERNS))
def test_the_quicker_fact_patterns_find_what_the_plain_ones_find_in_real_logs(kind):
    if not all(path.exists() for path in LOGS):
        pytest.skip("the real logs are not in the shared fixtures")
    texts = [block.text[: lost.FACT_SCAN_CHARS] for path in LOGS
             for entry in Session.open(str(path)).entries for block in entry.blocks if block.text]
    found = [QUICK_FACT_PATTERNS[kind].findall(text) for text in texts]
    assert found == [PLAIN_FACT_PATTERNS[kind].findall(text) for text in texts]
    assert sum(map(len, found)) > 20


@pytest.mark.parametrize("item, after, held", [
    ("/home/u/shop/lib/orders/refund.ex", "Edited lib/orders/refund.ex to cap refunds.", True),  # named from the project
    ("/home/u/shop/lib/orders/refund.ex", "Edited refund.ex.", False),  # a file name alone could be any
    ("/home/u/shop/lib/orders/refund.ex", "Nothing about files.", False),
    ("~/notes/todo.md", "see notes/todo.md", True),
    ("lib/orders/refund.ex", "orders/refund.ex", False),  # a relative path is held whole only
    ("/repo/frontend/src/index.ts", "Changed backend/src/index.ts.", False),  # another file with the same last parts
    ("/etc/nginx/sites-enabled/default.conf", "see apache/sites-enabled/default.conf", False),
])
def test_a_path_from_the_root_is_held_by_its_project_relative_form(item, after, held):
    from ctxtop.context.audit.lost import held as is_held
    from ctxtop.context.rules.facts import normalize

    assert is_held("paths", item, normalize(after)) is held


@pytest.mark.parametrize("text, identifiers", [
    ("rotate sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 today", []),  # a key's body, its prefix left behind
    ("OPENAI_API_KEY=sk-proj-Xk3mQp_Lz9rTvWy2 set", ["OPENAI_API_KEY"]),
    ("xoxb-1234-AbCdEfGhIjKl and glpat-AbCd_EfGh12", []),
    ("call maxRetries with --dryRun, see my_module.fooBar", ["maxRetries", "dryRun", "my_module", "fooBar"]),
])
def test_an_identifier_is_never_taken_from_inside_a_hyphenated_word(text, identifiers):
    """A key's body (after "sk-ant-api03-") was a lost identifier of its own, and --redact, which knows a key by its
    prefix, wrote it unmasked in the audit's lost facts (export's lost_items, the fleet's lost_facts)."""
    assert lost._IDENT.findall(text) == identifiers


def test_a_unit_ends_with_its_word():
    # Logged code that prints escape sequences holds "[1mbold": no size of 1 MB.
    assert lost._NUMBER_UNIT.findall("\x1b[1mbold \x1b[1;31mbold, 5 MB and 30% of 2 days") == ["5 MB", "30%", "2 days"]


def test_the_frame_claude_code_puts_before_a_hooks_context_is_no_fact_a_compaction_loses():
    # After the second compaction, the hooks' own re-injection ("SessionStart:compact hook additional context: …")
    # had "SessionStart" among the identifiers lost; the context itself is read as any injected text.
    def window(*blocks: Block) -> WindowText:
        built = Window(at=len(blocks))
        for i, block in enumerate(blocks, 1):
            built.append(WindowBlock(Entry(i, "user", [block], 0, i), 0, block, 1))
        return WindowText(built)

    framed = Block(INJECTED, "SessionStart:compact hook additional context: Rules re-injected by ctxtop: keep ERR_LEGACY_CODE")
    before, after = window(framed, Block(USER, "go on")), window(Block(USER, "go on"))
    assert fact_candidates(before)["identifiers"] == ["ERR_LEGACY_CODE"]
    assert lost_items(before, after)["identifiers"] == ["ERR_LEGACY_CODE"]
    said = window(Block(USER, "the SessionStart:compact hook additional context: is empty"))  # not a frame: the user's words
    assert "SessionStart" in fact_candidates(said)["identifiers"]


# The split the audit's sentences were first read with, each stripped, the empty ones dropped.
PLAIN_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?；;])|\n+|(?<=\.)\s+")
SENTENCE_ALPHABET = ["a", "b c", ".", "..", "。", "！", "？", "!", "?", "；", ";", "\n", "\n\n", " ", "\t", "\r", "\u3000", "\u2028",
                     "\x85", "\x1c", ",", "1.5"]


@settings(max_examples=1000, deadline=None)
@given(text=st.lists(st.sampled_from(SENTENCE_ALPHABET), max_size=20).map("".join))
def test_sentences_are_those_of_the_plain_split(text):
    assert sentences(text) == [s.strip() for s in PLAIN_SENTENCE_SPLIT.split(text) if s.strip()]


# The claims' coordinate patterns as first written: what the quicker ones must find.
PLAIN_CLAIM_PATTERNS = {
    "pascal_case": (claims._PASCAL_CASE, re.compile(r"\b[A-Z][a-z]+[A-Z][A-Za-z0-9]+\b")),
    "numbers": (claims._NUMBER_UNIT, re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|元|美元|USD|KB|MB|GB|ms|秒|分钟|小时|天|days?|hours?|tokens?)",
                                                re.IGNORECASE)),
}
CLAIM_ALPHABET = ["a", "Ab", "Z", "Cd9", "_", "é", "É", "٣", "1", "2,5", ".", ".5", "-", " ", "\n", "%", "元", "KB", "ms", "days", "Tokens"]


@pytest.mark.parametrize("kind", list(PLAIN_CLAIM_PATTERNS))
@settings(max_examples=1000, deadline=None)
@given(text=st.lists(st.sampled_from(CLAIM_ALPHABET), max_size=20).map("".join))
def test_the_quicker_claim_patterns_find_what_the_plain_ones_find(kind, text):
    quick, plain = PLAIN_CLAIM_PATTERNS[kind]
    assert quick.findall(text) == plain.findall(text)



@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:24])
def test_a_window_read_after_an_earlier_one_takes_what_it_read_of_the_same_blocks_and_finds_the_same(path):
    if not path.exists():
        pytest.skip(f"{path.name} not in the shared fixtures")
    session = Session.open(path)
    constraints = select_rules(session.entries, RuleRequest())
    # Rules no window holds verbatim (their terms are looked for), one with a negation (its negated terms too).
    constraints += [make_constraint(text, "pin") for text in ("the session summary names the files", "Never push the tests")]
    # The window after each compaction, then the one before the next (which holds its summary), and a few others.
    at = sorted({m for c in session.compactions() for m in (c.message - 1, c.message + 1)} | {1, len(session.entries)})
    taken = 0
    for earlier_at, window_at in itertools.permutations(at[:8], 2):
        earlier = WindowText(session.window_at(earlier_at, exact=False))
        for constraint in constraints:
            earlier.status(constraint)  # what the earlier window reads of its blocks
        text = WindowText(session.window_at(window_at, exact=False), earlier)
        fresh = WindowText(session.window_at(window_at, exact=False))
        assert text.blocks == fresh.blocks
        assert [text.status(c) for c in constraints] == [fresh.status(c) for c in constraints]
        assert text._postings() == fresh._postings()
        taken += sum(any(terms is kept for kept in earlier._kept_terms.values()) for terms in text._kept_terms.values())
    assert taken or not session.compactions()  # a summary's terms were taken, not only compared
