"""Byte-level line splitting and tolerant JSON decoding shared by the JSONL parsers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

Buffer = bytes | bytearray | memoryview


class DecodeError(ValueError):
    """A line or document that is not usable JSON."""


# orjson sizes its working memory by a line's length, about 13 times it: a 7 MB line would take
# 90 MB for a moment. Lines this long go to the stdlib's decoder (as fast on such lines, 3.5 times the length).
BIG_LINE_BYTES = 1 << 20


def loads(data: Buffer) -> Any:
    """Decode JSON, falling back to the stdlib for what orjson refuses but JSON allows.

    orjson rejects integers beyond 64 bits; the stdlib accepts them. Invalid
    UTF-8, NaN and nesting beyond the stdlib's recursion limit are errors.
    """
    if len(data) > BIG_LINE_BYTES:
        return _stdlib_loads(data, "not JSON")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as first:
        return _stdlib_loads(data, str(first).split(":", 1)[0])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _stdlib_loads(data: Buffer, why: str) -> Any:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise DecodeError("JSON nested too deeply") from None
    except ValueError as exc:
        raise DecodeError(why if why != "not JSON" else str(exc).split(":", 1)[0]) from None


def iter_lines(data: Buffer, start: int = 0, first_line: int = 1, stop: int | None = None,
               base: int = 0) -> Iterator[tuple[int, int, memoryview, bool]]:
    """Yield ``(offset, line_number, line, complete)`` for each non-blank line before byte ``stop``.

    ``data`` is ``bytes`` or an ``mmap`` (anything with ``find``), so huge files
    are split without copying. ``complete`` is False only for a last line with
    no newline after it: a writer may still be in the middle of it. ``stop``
    (default: the end) must fall just after a newline. ``base`` is added to the
    offsets yielded, for ``data`` that is a slice of a file read from there.
    """
    with memoryview(data) as view:  # released on exit, so an mmap can be closed after
        end = len(view) if stop is None else min(stop, len(view))
        pos = start
        line_number = first_line
        while pos < end:
            newline = data.find(b"\n", pos)
            complete = newline != -1
            stop = newline if complete else end
            if not _is_blank(view, pos, stop):
                with view[pos:stop] as line:
                    yield base + pos, line_number, line, complete
            pos = stop + 1
            line_number += 1


def _is_blank(view: memoryview, start: int, stop: int) -> bool:
    # Look at a short head first so that a 50 MB line is not copied just to test it.
    head = bytes(view[start : min(stop, start + 64)])
    if head.strip():
        return False
    return not bytes(view[start:stop]).strip()


def json_text(value: Any) -> str:
    """Compact, readable JSON for tool inputs (non-ASCII kept as it is)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, ensure_ascii=False, default=str)
