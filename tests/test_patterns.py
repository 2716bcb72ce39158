"""Patterns compiled on first use behave as ``re.compile``'s, and a process that imports the rules compiles none."""

import copy
import pickle
import re
import subprocess
import sys

from ctxtop.context.rules.patterns import compiled_on_use


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
