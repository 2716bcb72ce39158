"""Number options of the command line: every one bounded, so a silly value is a usage error (exit 2); and file options, never empty.

Integers of 2^53 or more (``--window 99999999999999999999999``) are beyond any window or session and
beyond what 64-bit JSON output holds; infinities and NaN are no time limit.
"""

from __future__ import annotations

import argparse
import math

from ctxtop.context.strategies.params import token_number
from ctxtop.parsers.numbers import MAX_COUNT


def whole_number(text: str, what: str = "a whole number") -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:  # also a number of more than 4,300 digits
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
    if abs(value) >= MAX_COUNT:
        raise argparse.ArgumentTypeError(f"too large: {text!r}")
    return value


def positive_int(text: str) -> int:
    value = whole_number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def token_count(text: str) -> int:
    """A positive number of tokens, written as a strategy's are: ``200000``, ``200_000``, ``200k``, ``1m``."""
    try:
        value = token_number(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def message_number(text: str) -> int:
    return whole_number(text, "a message number")


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0 < value < 1e6):
        raise argparse.ArgumentTypeError(f"must be positive (and below a million): {text!r}")
    return value


def file_name(text: str) -> str:
    """A file option's value: an empty one (a script's variable unset) names no file, and is no way to leave it out."""
    return _given(text, "a file name")


def command(text: str) -> str:
    """A command option's value: empty (a script's variable unset), it would leave out what the option asks for."""
    return _given(text, "a command")


def rule_text(text: str) -> str:
    """A ``--pin``'s text: empty (a script's variable unset), the rule meant would go unchecked, and ``check`` pass."""
    return _given(text, "a rule's text")


class OnePinsFile(argparse.Action):
    """``--pins``, which takes one file: given again (a script adding its own), the second replaced the first unsaid,
    and the first file's rules went unchecked; a usage error instead."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            raise argparse.ArgumentError(self, "given twice: one pins file (put every rule in it)")
        setattr(namespace, self.dest, values)


def _given(text: str, what: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{what}, not an empty one")
    return text


# A poll more often than this reads the log's size in a busy loop: a core spent to see a change a few ms sooner.
MIN_POLL_SECONDS = 0.01


def poll_seconds(text: str) -> float:
    value = positive_float(text)
    if value < MIN_POLL_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_POLL_SECONDS:g} s (a shorter poll is a busy loop): {text!r}")
    return value
