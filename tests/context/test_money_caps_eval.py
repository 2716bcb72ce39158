"""bench/money_caps_eval.py as a table: each rule read as the cap it states on money (or none), each call judged
by the guard as labelled. The cases ctxtop still gets wrong are listed, each with why, and must stay wrong
until fixed (strict): a fix moves them out of the list."""

from __future__ import annotations

import pytest

from ..conftest import bench_module

EVAL = bench_module("money_caps_eval")
# (rule, index of the call among that rule's cases) → why ctxtop still judges it wrong
STILL_WRONG: dict[tuple[str, int], str] = {
}


def _ids() -> list[tuple[str, int]]:
    seen: dict[str, int] = {}
    ids = []
    for case in EVAL.CASES:
        seen[case.rule] = seen.get(case.rule, -1) + 1
        ids.append((case.rule, seen[case.rule]))
    return ids


@pytest.mark.parametrize("key, case", [
    pytest.param(key, case, marks=[pytest.mark.xfail(strict=True, reason=STILL_WRONG[key])] if key in STILL_WRONG else [],
                 id=f"{key[0][:40]}#{key[1]}")
    for key, case in zip(_ids(), EVAL.CASES)])
def test_each_call_is_judged_as_labelled(key, case):
    result = EVAL.judge(case)
    assert result.cap == case.cap and result.right, (result.flagged, result.reviewed, result.detail)


def test_the_set_is_big_and_hostile_enough():
    assert len(EVAL.CASES) >= 60 and len(EVAL.HELD_OUT) >= 15
    assert sum(case.violation for case in EVAL.CASES) >= 25 and sum(case.cap is None for case in EVAL.CASES) >= 15
