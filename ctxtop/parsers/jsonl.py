"""Byte-level line splitting and tolerant JSON decoding shared by the JSONL parsers."""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Iterator
from typing import Any

import orjson

from ctxtop.parsers.numbers import bounded_int

# A log, or a part of one, to split into lines: its bytes, or the file mapped into memory (both have
# ``find``, and their slices are bytes).
Log = bytes | bytearray | mmap.mmap
# What JSON is decoded from: a log, or one of its lines (a long line is a view into the log, see ``iter_lines``).
Buffer = Log | memoryview


class DecodeError(ValueError):
    """A line or document that is not usable JSON."""


# orjson sizes its working memory by a line's length, about 13 times it: a 7 MB line would take
# 90 MB for a moment. Lines this long go to the stdlib's decoder (as fast on such lines, 3.5 times the length).
BIG_LINE_BYTES = 1 << 20
# Deeper JSON is refused: every later step that walks a record (content, redaction, output) recurses,
# and no agent writes records nested this deep. Counted by the caller (a malformed line).
MAX_DEPTH = 200
_OPENERS = b"[{"
# A lone surrogate escape ("\ud800": an emoji cut in half by a writer); the stdlib decodes it into a
# str that no UTF-8 output can hold.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(data: Buffer | str) -> Any:
    """Decode JSON, falling back to the stdlib for what orjson refuses but JSON allows.

    orjson rejects lone surrogates and reads integers beyond 64 bits as floats;
    the stdlib path does the same with them (a lone surrogate becomes U+FFFD).
    Invalid UTF-8, NaN and nesting deeper than ``MAX_DEPTH`` are errors.
    """
    if len(data) > BIG_LINE_BYTES or isinstance(data, mmap.mmap):  # (orjson reads no mmap; a log is mapped only when big)
        value = _stdlib_loads(data, "not JSON")
    else:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as first:
            value = _stdlib_loads(data, str(first).split(":", 1)[0])
    if isinstance(value, (dict, list)) and _may_be_deep(data) and _depth(value) > MAX_DEPTH:
        raise DecodeError(f"JSON nested deeper than {MAX_DEPTH}")
    return value


def _may_be_deep(data: Buffer | str) -> bool:
    # Counting brackets is fast (in C); only a document with this many is walked.
    if isinstance(data, str):
        return data.count("[") + data.count("{") > MAX_DEPTH
    raw = data if isinstance(data, (bytes, bytearray)) else bytes(data)
    return raw.count(b"[") + raw.count(b"{") > MAX_DEPTH


def _depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar: 0), without recursion, stopping once past ``MAX_DEPTH``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _stdlib_loads(data: Buffer | str, why: str) -> Any:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"invalid UTF-8 at byte {exc.start}") from None
    # A UTF-8 byte order mark (what a Windows editor or PowerShell's Out-File writes first) is no part of the JSON:
    # orjson refuses it, so it is met only here, off the fast path.
    text = text.removeprefix("\ufeff")
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_int=bounded_int)
    except RecursionError:
        raise DecodeError("JSON nested too deeply") from None
    except ValueError as exc:
        raise DecodeError(why if why != "not JSON" else str(exc).split(":", 1)[0]) from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            value = _without_surrogates(value)
        except RecursionError:
            raise DecodeError("JSON nested too deeply") from None
    return value


def _without_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def iter_lines(data: Log, start: int = 0, first_line: int = 1, stop: int | None = None,
               base: int = 0) -> Iterator[tuple[int, int, Buffer, bool]]:
    """Yield ``(offset, line_number, line, complete)`` for each non-blank line before byte ``stop``.

    ``data`` is ``bytes`` or an ``mmap`` (anything with ``find``). A line is a slice of it, copied
    (as fast as a view is made, and what a view would be copied into to count its brackets), but
    for a line longer than BIG_LINE_BYTES: a view, so that a huge file is split without copying
    its big lines. ``complete`` is False only for a last line with
    no newline after it: a writer may still be in the middle of it. ``stop``
    (default: the end) must fall just after a newline. ``base`` is added to the
    offsets yielded, for ``data`` that is a slice of a file read from there.
    """
    end = len(data) if stop is None else min(stop, len(data))
    find = data.find
    pos = start
    line_number = first_line
    while pos < end:
        newline = find(b"\n", pos)
        complete = newline != -1
        stop = newline if complete else end
        if pos < stop and (data[pos] > _SPACE or not _is_blank(data, pos, stop)):
            if stop - pos <= BIG_LINE_BYTES:
                yield base + pos, line_number, data[pos:stop], complete
            else:
                with memoryview(data) as view, view[pos:stop] as line:  # released on exit, so an mmap can be closed after
                    yield base + pos, line_number, line, complete
        pos = stop + 1
        line_number += 1


_SPACE = 0x20  # a line whose first byte is above it is not blank (the whitespace bytes are at or below)


def _is_blank(data: Buffer, start: int, stop: int) -> bool:
    # Look at a short head first so that a 50 MB line is not copied just to test it.
    with memoryview(data) as view:
        if bytes(view[start : min(stop, start + 64)]).strip():
            return False
        return not bytes(view[start:stop]).strip()


def json_text(value: Any) -> str:
    """Compact, readable JSON for tool inputs (non-ASCII kept as it is)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, ensure_ascii=False, default=str)
