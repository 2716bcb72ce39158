"""What the hooks know of a transcript, fast: the rules it states and its compactions, kept between calls.

A hook runs once per tool call, so reading a 100 MB transcript each time is
out of the question. A first read parses its lines without counting a token
(about a second per 100 MB; a bigger transcript is read over several calls,
READ_BUDGET_BYTES each, answering meanwhile with the rules found so far), and
what the hooks need — the auto-detected rules, the number of compaction
records, how far the file was read and a digest of the bytes just before that
— is kept as a small JSON file in ctxtop's cache directory (never beside the
transcript). The next call checks that the file still holds those bytes and
reads only what was appended; anything else (a rewritten, truncated or
replaced file, a damaged cache file) is a first read again.

The window the model sees now comes from the transcript's tail: the part after
its last compaction boundary (``window.tail_first``), or the whole log when it
has none.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ctxtop.context.rules.constraints import Constraint, detect_constraints, rule_key
from ctxtop.context.store.source import SourceError, open_file, read_head, read_log
from ctxtop.context.store.token_cache import cache_dir
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.tail_first import last_boundary, tail_session
from ctxtop.context.window.tokens import DEFAULT_ENCODING, TokenCounter
from ctxtop.parsers import registry
from ctxtop.parsers.base import LineParser
from ctxtop.parsers.model import Entries
from ctxtop.parsers.registry import PARSERS, UnknownFormat

KNOWN_VERSION = 5  # 2: rule ids and facts from the text as shown; 3: no rules from example blocks; 4: rules
# detected anew (permissions, idioms, headings, list entries; a rule restated under a label is the one before);
# 5: no cue inside a path or file name
CHECK_BYTES = 4096  # the bytes before the offset read, digested: a rewrite of the file changes them
# Read by one call at most (about a second): a bigger transcript (a first call on a 1 GB one) is read over
# several calls, each answering with the rules found so far.
READ_BUDGET_BYTES = 128 << 20
DETECT_HEAD_BYTES = 4 << 20
# What a transcript that cannot be read raises (a hook then goes on without it).
UNREADABLE = (SourceError, UnknownFormat, OSError)
MAX_KEPT_FILES = 600  # in the guard directory: three (known, status, PreCompact record) for each of 200 transcripts


@dataclass(slots=True)
class Known:
    """What the hooks keep of one transcript."""

    path: str  # resolved
    format: str
    offset: int  # bytes read: whole lines (the whole file, for a document format)
    check: str  # digest of the CHECK_BYTES before ``offset``
    messages: int  # entries read
    compactions: int  # compaction records read
    rules: list[Constraint]  # the auto-detected rules, in the order they are stated
    behind: int = 0  # bytes of the file not read yet (a big transcript is read over several calls); not saved

    def as_dict(self) -> dict:
        return {"version": KNOWN_VERSION, "path": self.path, "format": self.format, "offset": self.offset, "check": self.check,
                "messages": self.messages, "compactions": self.compactions, "rules": [_rule_dict(r) for r in self.rules]}


def guard_dir() -> Path:
    """Where the hooks keep what they know and record (ctxtop's cache directory, never beside a log)."""
    return cache_dir() / "guard"


def known_path(transcript: str | os.PathLike, suffix: str = "known") -> Path:
    resolved = os.path.realpath(transcript)
    digest = hashlib.blake2b(resolved.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    return guard_dir() / f"{digest}.{suffix}.json"


def known_transcript(transcript: str | os.PathLike) -> Known:
    """What is known of ``transcript``, brought up to date as far as one call may read (and saved for the next).

    Raises what ``Session.open`` raises for a log that cannot be read.
    """
    path = os.path.realpath(transcript)
    known = _load(path)
    if known is not None:
        caught_up = _catch_up(known)
        if caught_up is not None:
            if caught_up is not known:
                _save(caught_up)
            return caught_up
    known = _first_read(path)
    _save(known)
    return known


class TextOnlyCounter(TokenCounter):
    """Token counts the hooks never show: what they read of a window is its text (which rules and facts it
    holds), and the tokens they report are the log's own. Each count is a rough estimate (4 characters a
    token), so a hook never loads the tokenizer (about 0.2 s) nor writes to the token cache."""

    def __init__(self) -> None:
        super().__init__(DEFAULT_ENCODING, store=None)

    def _token_length(self, text: str) -> int:
        return len(text) // 4 + 1


def current_session(transcript: str | os.PathLike, known: Known) -> Session:
    """The session as far as the model sees it now (its texts; token counts estimated, see TextOnlyCounter):
    from the last compaction boundary on (a Claude Code or Codex log that has one), else the whole log."""
    counter = TextOnlyCounter()
    session = tail_session(transcript, min_bytes=0, counter=counter)
    if session is not None:
        return session
    parser_type = PARSERS.get(known.format)
    if parser_type is None or not issubclass(parser_type, LineParser):
        return Session.open(transcript)
    parser = parser_type()
    data = read_log(transcript)
    try:
        parser.feed(data, 0, final=False)
    finally:
        if hasattr(data, "close"):
            data.close()
    return Session(parser, path=str(transcript), counter=counter)


def window_before_last_compaction(known: Known) -> Window | None:
    """The window just before the transcript's last compaction (its text; token counts estimated): the part
    between the boundary before it and its own, read alone. None when the format marks no boundary or
    the transcript has none."""
    parser_type = PARSERS.get(known.format)
    if parser_type is None or not issubclass(parser_type, LineParser) or parser_type.boundary_marker is None:
        return None
    data = read_log(known.path)
    try:
        last = last_boundary(data, parser_type.boundary_marker, parser_type.is_boundary)
        if last is None:
            return None
        previous = last_boundary(data, parser_type.boundary_marker, parser_type.is_boundary, end=last) or 0
        parser = parser_type()
        parser.feed(data, previous, final=False, stop=last)
    finally:
        if hasattr(data, "close"):
            data.close()
    return Session(parser, path=known.path, counter=TextOnlyCounter()).window_at(None)


def _first_read(path: str) -> Known:
    """A JSON Lines transcript is read line by line like an appended part (no token is counted: 100 MB
    in about a second), up to READ_BUDGET_BYTES; a document format is opened whole."""
    try:
        log_format = registry.detect(read_head(path, DETECT_HEAD_BYTES))
    except UnknownFormat:
        log_format = None  # maybe a document whose head alone does not tell: Session.open decides
    if log_format is not None and issubclass(PARSERS[log_format], LineParser):
        started = _catch_up(Known(path, log_format, 0, digest_before(path, 0), 0, 0, []))
        if started is not None:
            return started
    session = Session.open(path)
    entries = session.entries
    size = os.stat(path).st_size
    return Known(path, session.format, size, digest_before(path, size), len(entries),
                 sum(1 for e in entries if e.compaction is not None), detect_constraints(entries, session.format))


def _catch_up(known: Known) -> Known | None:
    """``known`` with what the file appended since; None when the file is not the one read (a full read then)."""
    try:
        size = os.stat(known.path).st_size
    except OSError:
        return None
    if size < known.offset or digest_before(known.path, known.offset) != known.check:
        return None
    if size == known.offset:
        known.behind = 0
        return known
    appended = read_appended(known.path, known.format, known.offset, READ_BUDGET_BYTES)
    if appended is None:
        return None  # a document format: read whole again
    entries, offset, cut = appended
    seen = {rule_key(r.text) for r in known.rules}
    fresh = []
    for rule in detect_constraints(entries, known.format):
        if rule_key(rule.text) not in seen:
            if rule.first_stated is not None:
                rule.first_stated += known.messages
            fresh.append(rule)
    return Known(known.path, known.format, offset, digest_before(known.path, offset), known.messages + len(entries),
                 known.compactions + sum(1 for e in entries if e.compaction is not None), known.rules + fresh,
                 behind=max(0, size - offset) if cut else 0)  # (not a last line still being written)


class Appended(NamedTuple):
    entries: Entries
    end: int  # where the whole lines read end
    cut: bool  # whole lines after them were left for later (``budget``); else only a line still being written, if any


def read_appended(path: str, log_format: str, offset: int, budget: int | None = None) -> Appended | None:
    """The entries of the whole lines after byte ``offset`` (read by a parser of their own; ``budget``: no
    more than about that many bytes), and where they end; None for a format that is not read line by line."""
    parser_type = PARSERS.get(log_format)
    if parser_type is None or not issubclass(parser_type, LineParser):
        return None
    parser = parser_type()
    data = read_log(path)
    size = len(data)
    try:
        stop = None
        if budget is not None and size - offset > budget:
            newline = data.find(b"\n", offset + budget)
            stop = newline + 1 if newline != -1 else None
        end = parser.feed(data, offset, final=False, stop=stop)
    finally:
        if hasattr(data, "close"):
            data.close()
    return Appended(parser.entries, end, stop is not None and end < size)


def digest_before(path: str, offset: int) -> str:
    """A digest of the CHECK_BYTES before ``offset``: the same while the file keeps what was read."""
    start = max(0, offset - CHECK_BYTES)
    try:
        with open_file(path) as handle:
            handle.seek(start)
            data = handle.read(offset - start)
    except OSError:
        return ""
    return hashlib.blake2b(data, digest_size=16).hexdigest() if len(data) == offset - start else ""


def _load(path: str) -> Known | None:
    try:
        raw = json.loads(known_path(path).read_text(encoding="utf-8"))
        if raw.get("version") != KNOWN_VERSION or raw.get("path") != path:
            return None
        return Known(path, str(raw["format"]), int(raw["offset"]), str(raw["check"]), int(raw["messages"]), int(raw["compactions"]),
                     [_rule_from(r) for r in raw["rules"]])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # none yet, or damaged: read the transcript again


def _save(known: Known) -> None:
    path = known_path(known.path)
    new = not path.exists()
    write_json(path, known.as_dict())
    if new:
        prune()


def prune(keep: int | None = None) -> None:
    """Keep the guard directory bounded: past ``keep`` files, the least recently written go (a transcript
    whose files went is read whole again at its next hook)."""
    keep = MAX_KEPT_FILES if keep is None else keep
    try:
        files = [(entry.stat().st_mtime, entry.path) for entry in os.scandir(guard_dir()) if entry.is_file()]
    except OSError:
        return
    if len(files) <= keep:
        return
    for _mtime, path in sorted(files)[: len(files) - keep * 3 // 4]:
        try:
            os.unlink(path)
        except OSError:
            pass


def write_json(path: Path, data: object) -> bool:
    """Write ``data`` atomically (a private temporary file renamed): concurrent hooks never mix their writes.
    A cache that cannot be written is not an error: the next call reads the transcript again. Whether it was written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise
    except OSError:
        return False
    return True


def _rule_dict(rule: Constraint) -> dict:
    return {"id": rule.id, "text": rule.text, "source": rule.source, "facts": rule.facts, "forbid": rule.forbid,
            "first_stated": rule.first_stated, "cue": rule.cue, "origin": rule.origin}


def _rule_from(raw: dict) -> Constraint:
    return Constraint(id=str(raw["id"]), text=str(raw["text"]), source=str(raw["source"]), facts=[str(f) for f in raw["facts"]],
                      forbid=[str(f) for f in raw["forbid"]], first_stated=raw["first_stated"], cue=str(raw["cue"]),
                      origin=str(raw["origin"]))
