"""Patterns compiled on first use behave as ``re.compile``'s, and a process that imports the rules compiles none;
keyword gates never turn away a text their pattern matches."""

import copy
import pickle
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.audit.forensics.claims import _USER_CLAIM as USER_CLAIM
from ctxtop.context.audit.forensics.claims import USER_CLAIM_WORDS
from ctxtop.context.audit.forensics.pair import REJECTION, REJECTION_WORDS
from ctxtop.context.audit.lost import _RULE_WORDS as RULE_WORDS
from ctxtop.context.audit.lost import RULE_WORDS_GATE
from ctxtop.context.rules.patterns import KeywordGate, any_of, compiled_on_use

from .test_lazy_text import eager, jsonl_logs


def test_a_pattern_compiled_on_use_answers_as_the_compiled_one():
    source, text = r"\b(?:never|must\s+not)\b\s+(\w+)", "You MUST NOT push; never email. Never deploy."
    lazy, eager = compiled_on_use(source, re.IGNORECASE), re.compile(source, re.IGNORECASE)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.sub("<\\1>", text) == eager.sub("<\\1>", text)
    assert lazy.search(text, 10).group(1) == eager.search(text, 10).group(1) == "email"
    assert lazy.findall(text) == ["push", "email", "deploy"]
    assert lazy.pattern == source and lazy.flags == eager.flags and lazy.groups == 1


def test_nothing_is_compiled_until_it_is_used():
    lazy = compiled_on_use(r"[")  # not valid: an eager compile would raise here
    assert "compiled_on_use" in repr(lazy)
    try:
        lazy.search("x")
    except re.error:
        pass
    else:
        raise AssertionError("an invalid pattern compiled")


def test_copies_and_pickles_do_not_reach_for_the_pattern():
    lazy = compiled_on_use(r"\d+")
    assert copy.deepcopy(lazy).findall("a1b22") == ["1", "22"]
    assert pickle.loads(pickle.dumps(lazy)).findall("a1b22") == ["1", "22"]


def test_importing_the_rules_compiles_none_of_their_patterns():
    code = ("import gc, sys, ctxtop.context.rules.constraints, ctxtop.context.guard.status\n"
            "from ctxtop.context.rules.patterns import _CompiledOnUse\n"
            "patterns = [o for o in gc.get_objects() if isinstance(o, _CompiledOnUse)]\n"
            "print(len(patterns), sum(1 for p in patterns if set(vars(p)) - {'_source', '_flags'}),"
            " ','.join(m for m in ('tiktoken', 'regex', 'concurrent.futures') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    count, compiled, heavy = (result.stdout.split() + [""])[:3]
    assert int(count) >= 60 and int(compiled) == 0 and heavy == "", result.stdout


# --- keyword gates: a cheap "cannot match" before a pattern's search ---------------------------------

GATED = [(REJECTION, REJECTION_WORDS), (RULE_WORDS, RULE_WORDS_GATE), (USER_CLAIM, USER_CLAIM_WORDS)]
GATE_NAMES = ["rejection", "rule words", "user claim"]


@pytest.mark.parametrize("pattern, gate", GATED, ids=GATE_NAMES)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_gate_never_says_no_where_its_pattern_matches(pattern, gate, data):
    # Texts holding a match of the pattern (case-insensitive: the odd letters İ ı ſ K included), amid anything.
    text = data.draw(st.from_regex(pattern))
    assert gate.may_match(text)


@pytest.mark.parametrize("pattern, gate", GATED, ids=GATE_NAMES)
def test_a_gate_agrees_with_its_pattern_on_every_real_text(pattern, gate):
    texts = [block.text for path in jsonl_logs() for entry in eager(path).entries for block in entry.blocks]
    assert len(texts) > 400
    passed = [t for t in texts if gate.may_match(t)]
    assert all(gate.may_match(t) for t in texts if pattern.search(t))
    assert len(passed) < len(texts)  # it does keep some texts from the pattern


def test_a_gate_says_no_only_without_its_keywords():
    gate = KeywordGate("ruled out", "don't")
    assert not gate.may_match("ls -la /tmp && cat notes.md")
    assert not gate.may_match("ruled  out, do not")  # two spaces: not the keyword
    assert gate.may_match("We RULED OUT redis") and gate.may_match("DON'T")
    assert gate.may_match("a ſtray letter")  # folds to an ASCII letter in a case-insensitive pattern
    with pytest.raises(ValueError):
        KeywordGate("Upper")


def test_a_gate_skips_a_keyword_that_holds_another():
    assert KeywordGate("decided", "decide", "否决了", "否决", "decide").keywords == ("decide", "否决")


def test_any_of_matches_each_word_as_written():
    words = ("c++", "a.b", "do not", "(x)", "[y]")
    pattern = re.compile(any_of(words))
    assert [pattern.fullmatch(word) is not None for word in words] == [True] * len(words)
    assert pattern.search("c+ aXb do  not x y") is None
