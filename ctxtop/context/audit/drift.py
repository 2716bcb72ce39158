"""Drift after a compaction: the agent re-running calls and re-reading files it already had."""

from __future__ import annotations

import functools
import hashlib
import re
from bisect import bisect_right
from collections import Counter
from typing import Any, NamedTuple

import orjson

DRIFT_REPEAT_ALERT = 3  # a call repeated more often than this after a compaction is drift


class Call(NamedTuple):  # (not a frozen dataclass: one is made per tool call, and that costs three times as much)
    message: int
    name: str
    key: int  # digest of the name and canonical input: the same call made twice has the same key
    read_target: str | None
    is_edit: bool


class DriftScan:
    """Calls, reads and edits after each compaction that repeat what was done before it.

    Every tool call is read once; the calls before each compaction are a running
    count, so auditing a session costs one pass however many compactions it has.
    Compactions must be asked for in message order.
    """

    def __init__(self, calls: list[Call]) -> None:
        self.calls = calls  # every tool call, in message order (the audit's reading collects them)
        self._before_calls: Counter = Counter()
        self._before_reads: set[str] = set()
        self._counted = 0  # calls already in the running count

    def advance_to(self, compaction: int) -> None:
        """Count the calls before message ``compaction`` into the running count."""
        calls = self.calls
        while self._counted < len(calls) and calls[self._counted].message < compaction:
            call = calls[self._counted]
            self._before_calls[call.key] += 1
            if call.read_target:
                self._before_reads.add(call.read_target)
            self._counted += 1

    def state(self) -> tuple[Counter, set[str], int]:
        """A copy of the running count, to go on from (``restore``) in a later audit."""
        return Counter(self._before_calls), set(self._before_reads), self._counted

    def restore(self, state: tuple[Counter, set[str], int]) -> None:
        before_calls, before_reads, self._counted = state
        self._before_calls, self._before_reads = Counter(before_calls), set(before_reads)

    def between(self, compaction: int, until: int) -> dict[str, Any]:
        """Drift in the messages after ``compaction`` and before ``until`` against everything before ``compaction``."""
        calls = self.calls
        self.advance_to(compaction)
        after_calls: Counter = Counter()
        names: dict[int, str] = {}
        repeated = rereads = repeated_edits = 0
        for position in range(bisect_right(calls, compaction, key=lambda c: c.message), len(calls)):
            call = calls[position]  # (not a slice of the rest: that copies every later call, at every compaction)
            if call.message >= until:
                break
            after_calls[call.key] += 1
            names[call.key] = call.name
            if call.key in self._before_calls:
                repeated += 1
                repeated_edits += call.is_edit
            if call.read_target and call.read_target in self._before_reads:
                rereads += 1
        repeats = {(names[key], key): count for key, count in after_calls.items() if count > DRIFT_REPEAT_ALERT}
        return {"repeated_calls": repeated, "rereads": rereads, "repeated_edits": repeated_edits, "_repeats": repeats}


def call_of(message: int, name: str | None, text: str, data: Any) -> Call:
    """``data``: ``input_data(text)``, decoded once by the caller for this and the forensics' ``action_of``."""
    reads, edits = _reads_and_edits(name)
    return Call(message, name or "?", _call_key(name, text, data), _read_target(data) if reads else None, edits)


NOT_JSON = object()  # ``input_data`` of an input that is no JSON


def input_data(text: str) -> Any:
    """The JSON value a tool call's input holds, or NOT_JSON."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return NOT_JSON


_READ_TOOL = re.compile(r"read|view|cat|open", re.IGNORECASE)
_EDIT_TOOL = re.compile(r"edit|write|patch|replace", re.IGNORECASE)


@functools.lru_cache(maxsize=256)  # (asked at every call; a log's tools are a few dozen)
def _reads_and_edits(name: str | None) -> tuple[bool, bool]:
    """Whether a tool's name says it reads, and whether it says it edits."""
    return bool(name and _READ_TOOL.search(name)), bool(name and _EDIT_TOOL.search(name))


def _call_key(name: str | None, text: str, data: Any) -> int:
    canonical = None
    if data is not NOT_JSON:
        try:
            canonical = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # JSON orjson reads but cannot write back (nested deeper than it writes)
            pass
    if canonical is None:
        canonical = " ".join(text.split()).encode("utf-8", "surrogatepass")
    # A digest, not the input itself: a session holds tens of thousands of calls.
    digest = hashlib.blake2b(canonical, digest_size=8, key=(name or "?").encode("utf-8", "surrogatepass")[:64])
    return int.from_bytes(digest.digest(), "little")


def _read_target(data: Any) -> str | None:
    if isinstance(data, dict):
        for key in ("file_path", "path", "filename", "file"):
            if isinstance(data.get(key), str):
                return data[key]
    return None


# --- violations ---------------------------------------------------------------------------
