"""Hostile input of hostile size: a rule or a tool call of a hundred kilobytes or ten megabytes is read in
time linear in its length, never in its square (a regex that tries again from every position of a long
run, a loop over pairs).

The bounds are generous (seconds for what takes milliseconds): the gap between linear and quadratic here is
tens of seconds against a few milliseconds, far beyond a noisy machine's spread.
"""

from __future__ import annotations

import time

import pytest

from ctxtop.context.output.redact import redact_text
from ctxtop.context.rules.cues import rule_cue
from ctxtop.context.rules.facts import MAX_FACTS, find_paths, key_facts, key_terms, normalize
from ctxtop.context.rules.naming import readable_id
from ctxtop.context.sanitize import replace_emails

RUN = 100_000  # characters: a pasted blob, a minified line, a long number
# Runs that once made a pattern retry its rest at every position: digits, letters, names, paths without
# a slash, dotted and hyphenated words, and the separators between them ("=" too, which a local part may hold).
HOSTILE_RUNS = ["AKIA0000000000000000-", "[", "[ ", "“", "a-token ", "1.1@", "_a.", "_.-+%", "1", "1,", "1.", " ", "$", "a", "A", "aB", "a_", "a-", "-", "a-1", "..", "a.", "~", "/", '"', "`",
                "不要", "1 ", "1%", "a/", "~a", "a=", "=a.", "a=@", "a.to=", "a_b.c-d="]


def seconds(function, *args) -> float:
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


@pytest.mark.parametrize("unit", HOSTILE_RUNS)
def test_key_facts_of_a_rule_holding_a_long_run_is_linear(unit):
    text = "Never spend more than 8000 USD: " + unit * (RUN // len(unit))
    assert seconds(key_facts, text) < 5


@pytest.mark.parametrize("function", [key_terms, normalize, readable_id, lambda text: replace_emails(text, "email"),
                                      lambda text: rule_cue(text, is_item=False)])
@pytest.mark.parametrize("unit", HOSTILE_RUNS)
def test_the_other_fact_readers_of_a_long_run_are_linear(function, unit):
    assert seconds(function, "Never spend more than 8000 USD: " + unit * (RUN // len(unit))) < 5


@pytest.mark.parametrize(("text", "paths"), [
    ("edit src/app.py and ~/notes.md", ["src/app.py", "~/notes.md"]),
    ("a.py-b.py", ["a.py", "-b.py"]),  # a hyphen right after a file name starts the next
    ("run --config.json", ["config.json"]),  # a file name's leading hyphens are no part of it
    ("x.--foo.py", ["foo.py"]),
    ("_s..py----j9x.py-_.json", ["py----j9x.py", "-_.json"]),
    ("1" * 1000 + " a/b", ["a/b"]),
])
def test_paths_are_found_where_the_pattern_tried_at_every_position_found_them(text, paths):
    assert find_paths(text) == paths


def test_a_rule_with_thousands_of_facts_keeps_the_first_and_its_rule_words():
    numbers = [str(n) for n in range(10, 10_000)]
    facts = key_facts("Never pay more than these: " + " ".join(numbers))
    assert facts == numbers[:MAX_FACTS] + ["never"]


@pytest.mark.parametrize(("text", "rule_id"), [
    ("never log the password=hunter2 value", "no-log-password-value"),
    ("do not log --token=s3cret", "no-log-token"),
    ("never commit AKIA0000000000000000-password=hunter2 anywhere", "no-commit-password-anywhere"),
    ("x-AKIA0000000000000000-token=s3 keep", "keep-x-token"),
    ("never print ASIAIOSFODNN7EXAMPLE in logs", "no-print-logs"),
])
def test_rule_ids_still_leave_out_secret_values(text, rule_id):
    assert readable_id(text) == rule_id


# Key starts run together, with a cut somewhere ("…"): each start of the run was read to its end.
# (And the starts of phone numbers: area codes, exchanges, country codes, the signs between them, the words before.)
@pytest.mark.parametrize("unit", ["SG.", "sk-", "eyJ-", "Bearer ", "_a.", "a-", "+1 ", "415-", "(415) ", "415.555.", "(2",
                                  "2-", "1-", "+1.", "2.2", "86-", "0086 1", "手机", "手机 13", "phone: ", "mobile no. 1",
                                  "a=", "=a.", "a=@", "x.email=", "=_", "(415) 5", "1 (415) 555-",
                                  "415-555-", "1-415-555-"])
def test_redacting_a_long_run_of_key_starts_is_linear(unit):
    assert seconds(redact_text, "see " + unit * (RUN // len(unit)) + " and sk-abc…") < 5


# A secret's name before its "=" or ":" ("DB_PASSWORD=", "x-api-key:"), looked for in runs of name characters: each
# word start of a hyphenated run read up to 64 characters of it, and 100 KB of "a-a-a-" took over a second.
@pytest.mark.parametrize("unit", ["a-", "-a", "1-", "a-a=", "a_", "a-token ", "a-password-", "token-", "_-", "a-b_c."])
def test_looking_for_a_secrets_name_in_a_long_run_is_fast(unit):
    from ctxtop.context.output.redact import _ASSIGNMENT

    assert seconds(_ASSIGNMENT.search, unit * (RUN // len(unit))) < 0.2
