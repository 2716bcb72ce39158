"""A first paint of a big log: the window after its last compaction, without reading the history.

The window the model sees now starts at the last compaction boundary, so a big
Claude Code or Codex log is scanned backwards (memory-mapped: only the pages
touched are read) for the last boundary record, and only the part after it is
parsed. The full history is then indexed in the background; until it is, the
message numbers are those of the tail, and messages a partial compaction
preserved from before the boundary are not in this first view.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxtop import parsers
from ctxtop.context.store.source import read_log
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.accounting import Accounting
from ctxtop.context.window.harness import HarnessPrefix
from ctxtop.context.window.replay import first_call_prefix
from ctxtop.context.window.session import Session
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.parsers.base import LineParser
from ctxtop.parsers.jsonl import DecodeError, loads
from ctxtop.parsers.registry import PARSERS

# Below this size a full open is quick enough that a first paint is not worth it.
TAIL_FIRST_BYTES = 32 << 20
# A tail bigger than this (big tool outputs, images) is counted by estimates for the first paint, as a whole
# log's history is (window.estimate): tokenizing 45 MB of text takes 2.5 s on two cores, estimating it
# a few ms. The first paint says its counts are estimates; the full open shows them exact.
EXACT_TAIL_BYTES = 8 << 20
# The head of the log is read this much at a time until its first model call, and no further than
# the limit: past it the first paint goes without the inference (the full open brings it).
HEAD_STEP_BYTES = 256 << 10
HEAD_LIMIT_BYTES = 8 << 20


def tail_session(path: str | os.PathLike, *, encoding: str = "cl100k_base", window: int | None = None,
                 min_bytes: int | None = None, counter: TokenCounter | None = None) -> Session | None:
    """The session from the last compaction boundary on, or None when a full open is the way (small log,
    another format, no compaction). ``counter``: another token counter (the hooks, which read only texts).

    A tail of more than EXACT_TAIL_BYTES is counted by estimates: ask for its window with
    ``window_at(None, exact=False)`` and say so (``Session.window_rough``) to paint it at once."""
    if Path(path).is_dir() or os.stat(path).st_size < (TAIL_FIRST_BYTES if min_bytes is None else min_bytes):
        return None
    data = read_log(path)
    try:
        try:
            name = parsers.detect(data)
        except parsers.UnknownFormat:
            return None
        parser_type = PARSERS[name]
        if parser_type.boundary_marker is None or not issubclass(parser_type, LineParser):  # (only line formats mark one)
            return None
        start = last_boundary(data, parser_type.boundary_marker, parser_type.is_boundary)
        if start is None:
            return None
        parser = parser_type()
        parser.feed(data, start, final=False)
        estimate = False
        if counter is None:
            counter = TokenCounter(encoding, store=TokenCache.default(encoding), parallel=True)  # first paint: every core
            estimate = len(data) - start > EXACT_TAIL_BYTES
        prefix = _first_call_prefix(data, parser_type, start, counter)
    finally:
        if hasattr(data, "close"):
            data.close()
    return Session(parser, path=str(Path(path)), counter=counter, window=window, harness=prefix, estimate=estimate)


def _first_call_prefix(data, parser_type: type[LineParser], end: int, counter: TokenCounter) -> HarnessPrefix | None:
    """The harness prefix inferred from the log's first model call, as the full open infers it:
    the head of the log is read until that call (the rest of the history is not)."""
    parser = parser_type()
    position, end = 0, min(end, HEAD_LIMIT_BYTES)
    while position < end:
        stop = data.find(b"\n", min(end, position + HEAD_STEP_BYTES) - 1)
        stop = end if stop == -1 or stop >= end else stop + 1
        position, before = parser.feed(data, position, parser.resume_line, final=False, stop=stop), position
        if position == before:
            return None  # a line running past the limit
        call = next((e for e in parser.entries if e.usage is not None), None)
        if call is not None:
            entries = parser.entries[: call.index]
            accounting = Accounting(counter)
            accounting.update(entries)
            return first_call_prefix(entries, accounting, call.index - 1, reasoning_kept=parser.reasoning_kept)
    return None


def last_boundary(data, marker: bytes, is_boundary, end: int | None = None) -> int | None:
    """The offset of the line holding the last boundary record (before ``end``; the marker may also occur
    in plain text)."""
    end = len(data) if end is None else end
    while True:
        found = data.rfind(marker, 0, end)
        if found == -1:
            return None
        line_start = data.rfind(b"\n", 0, found) + 1
        line_end = data.find(b"\n", found)
        try:
            record = loads(data[line_start : line_end if line_end != -1 else len(data)])
        except DecodeError:
            record = None
        if isinstance(record, dict) and is_boundary(record):
            return line_start
        end = line_start
