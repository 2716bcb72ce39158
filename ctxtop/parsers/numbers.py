"""Numbers read from logs: token counts and limits are bounded before anything is computed with them.

A log is untrusted: a usage field may hold a negative number, ``true``, or an
integer of a hundred digits. Such a value is not a count; parsers take it as
missing and count it in ``Diagnostics.invalid_numbers`` instead of showing
"-5,000 tokens" or failing later (64-bit packing, JSON output).
"""

from __future__ import annotations

import math
import sys
from typing import Any

# Far above any real window or usage (2^53: every such count is exact as a float, too, and JSON-safe).
MAX_COUNT = 1 << 53
# JSON integers beyond 64 bits are read as floats (orjson does so already), so that no later step
# (packing, 64-bit JSON output) meets an integer it cannot hold.
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT64_DIGITS = len(str(INT64_MIN))  # the longest literal that can be a 64-bit integer, its sign included


def count(value: Any) -> int | None:
    """``value`` when it is a usable count of tokens (a whole number, 0 ≤ value < 2^53), else None."""
    if type(value) is int and 0 <= value < MAX_COUNT:
        return value
    return None


def is_invalid_count(value: Any) -> bool:
    """Whether ``value`` is a number (or a boolean) where a count was expected, but not a usable one.

    A missing field (None) or a string is not counted as invalid: formats leave fields out, or
    use them for something else."""
    return isinstance(value, (int, float)) and count(value) is None


def bounded_int(text: str) -> int | float:
    """A JSON integer literal as an int, or as a float beyond 64 bits (``json.loads(parse_int=...)``)."""
    if len(text) <= INT64_DIGITS:
        value = int(text)
        if INT64_MIN <= value <= INT64_MAX:
            return value
    # From the text, not through int(): Python refuses to convert more than 4,300 digits (the whole
    # line would be lost), while float() of any length is quick.
    large = float(text)
    if math.isinf(large):  # beyond 1.8e308: saturated (finite, so it survives JSON), still more than any cap
        return sys.float_info.max if large > 0 else -sys.float_info.max
    return large


def number(value: Any) -> Any:
    """``value`` when JSON made it a number (booleans too), else None: what a parser hands on to be
    checked (``Parser.checked_usage``), so that a bad number is counted rather than silently dropped.
    (Typed Any: it becomes an ``int`` field of ``Usage`` only through that check.)"""
    return value if isinstance(value, (int, float)) else None


def summed(*values: Any) -> Any:
    """The sum of the numbers among ``values`` (a missing one counts 0) — or, when one of them is no
    count, that value itself, so that ``Parser.checked_usage`` counts it and ignores the usage: a
    negative cache figure must not quietly shrink a prompt size."""
    total = 0
    for value in values:  # one pass: the counts are summed, the first number that is no count is returned
        if count(value) is not None:
            total += value
        elif is_invalid_count(value):
            return value
    return total
