"""A saved index of a JSON Lines session, so opening it again parses only what was appended.

After a big log is read (INDEX_MIN_BYTES and up), its entries (big texts as
where they are, not what they say), token counts, content digests, the
parser's carried state and what the session derived from its entries (its
replays, timeline and tool column: a warm open replays nothing and unpacks
only the entries it reads) are written to the user's cache directory
(``$CTXTOP_CACHE_DIR/index/``). The next open of the same file with the same
format and encoding checks that the file still begins with exactly the bytes
that were indexed (a digest of them, taken while reading) and then feeds the
parser only the bytes after them. Anything else (the log rewritten or
truncated, a damaged or older index) is ignored and the log is read afresh.

The file is written with ``marshal`` (plain data only: loading it runs no
code), in batches, so neither saving nor loading holds a second copy of a big
session, and ends with a digest of all it holds: an index whose bytes were
damaged (a bad disk, a crash mid-write, anything else) is found before any of
it is used, deleted, rebuilt, and the user told. At most MAX_INDEXES are
kept, the least recently used dropped first.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from ctxtop.context.store import entry_store
from ctxtop.context.store.digest import new_digest
from ctxtop.context.store.entry_codec import decode_block, encode_block
from ctxtop.context.store.entry_store import EntryStore
from ctxtop.context.store.lazy_text import LogTexts
from ctxtop.context.store.source import open_file
from ctxtop.context.store.token_cache import cache_dir
from ctxtop.parsers.base import LineParser
from ctxtop.parsers.model import Diagnostics, SessionMeta, SidechainTotals

INDEX_VERSION = 23  # 5: usage carries the prompt-cache figures; 6: diagnostics count invalid numbers;
# 7: which counts are estimates from characters, and the calibration behind them; 8: texts over 128K
# characters estimated from pieces of themselves; 9: what people and the model wrote is held, not released;
# 10: the indexed bytes digested with XXH3-128; 11: the replays, timeline and tool column saved, entries decoded when read;
# 12: batches of entries compressed (``entry_store.packed``), the blocks counted from usage as flags, the timeline in 4-byte columns;
# 13: whether the log is a compaction's summarization call; 14: Claude Code's queued messages; 15: a replay's reported
# size, the timeline's unlogged rows; 16: Gemini's cache reads; 17: the first call's inferred prefix before it too;
# 18: a Gemini $rewindTo naming no id and a Claude Code chain field of a wrong type read as malformed, not obeyed;
# 19: a replay's message of the call that reported its size, the timeline's rows adding what came after that call;
# 20: the first message of that call's answer, added too; an image in a microcompacted tool result cleared with it;
# 21: images in Codex tool outputs, Codex rollbacks and unknown compaction triggers, a partial compaction's preserved messages
# written after it, Gemini's thoughts
# 22: an Inspect sample's first message has its start time, a reply its model call's; a Claude Code rewind's abandoned branch
# leaves the window (its system prompt too)
# 23: the blocks' content digests (saved with the counts) are XXH3-128 (``tokens.content_key``)
MAGIC = b"ctxtop-index v5\n"  # earlier versions (other checksums, or none) start otherwise: ignored, not "damaged"
CHECKSUM_BYTES = 16  # the index ends with the digest (``store.digest``) of all it holds after MAGIC
INDEX_MIN_BYTES = 8 << 20  # smaller logs read fast enough; their index would only fill the disk
MAX_INDEXES = 20


def index_path(log: str | os.PathLike, format: str, encoding: str) -> Path:
    name = hashlib.blake2b(f"{os.path.realpath(log)}\0{format}\0{encoding}".encode("utf-8", "surrogatepass"), digest_size=16)
    return cache_dir() / "index" / f"{name.hexdigest()}.idx"


def prefix_digest(log: str | os.PathLike, size: int) -> Any:
    """The digest of the first ``size`` bytes of ``log``, open to more bytes (None when it has fewer)."""
    digest = new_digest()
    remaining = size
    try:
        with open_file(log) as handle:
            while remaining:
                chunk = handle.read(min(remaining, 8 << 20))
                if not chunk:
                    return None
                digest.update(chunk)
                remaining -= len(chunk)
    except OSError:
        return None
    return digest


# --- saving -------------------------------------------------------------------------------------
def save(path: Path, parser: LineParser, accounting_saved: dict, derived_saved: Any, released_to: int, indexed: int, digest: bytes,
         encoding: str) -> None:
    """Write the index of ``parser``'s entries, read from the log's first ``indexed`` bytes (digest ``digest``),
    with the session's counts and what it derived from its entries as plain data (``Session.saved_derived``)."""
    entries = parser.entries
    if not isinstance(entries, EntryStore):  # (a JSON Lines session read in chunks keeps its entries in one)
        raise ValueError("only entries kept in an EntryStore are indexed")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".index-")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(MAGIC)
            out = _Checksummed(file)
            _write(out, {"version": INDEX_VERSION, "format": parser.name, "encoding": encoding, "indexed": indexed,
                          "digest": digest, "entries": len(entries)})
            for blob in entries.packed_batches():
                _write_blob(out, blob)
            d, m = parser.diagnostics, parser.meta
            _write(out, {
                "accounting": accounting_saved, "released_to": released_to, "resume_line": parser.resume_line,
                "diagnostics": [d.malformed_lines, d.unknown_records, d.skipped_records, d.torn_last_line, d.examples, d.unknown_kinds,
                                d.invalid_numbers],
                "meta": [m.session_id, m.model, m.context_window, m.title, m.cwd, m.summarizer],
                "sidechain": [parser.sidechain.messages, [encode_block(b) for b in parser.sidechain.blocks]],
                "state": parser.carry_state(),
            })
            _write(out, derived_saved)
            file.write(out.digest.digest())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _prune(path.parent)


class _Checksummed:
    """A file being written, digesting what goes through it."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        self.digest = new_digest()

    def write(self, data: bytes) -> None:
        self.digest.update(data)
        self.file.write(data)


def _intact(handle: BinaryIO) -> bool:
    """Whether the index's bytes after its magic still digest to the checksum at its end (read in pieces)."""
    size = os.fstat(handle.fileno()).st_size
    remaining = size - len(MAGIC) - CHECKSUM_BYTES
    if remaining < 0:
        return False
    digest = new_digest()
    handle.seek(len(MAGIC))
    while remaining:
        chunk = handle.read(min(remaining, 8 << 20))
        if not chunk:
            return False
        digest.update(chunk)
        remaining -= len(chunk)
    intact = handle.read(CHECKSUM_BYTES) == digest.digest()
    handle.seek(len(MAGIC))
    return intact


def _write(out: BinaryIO | _Checksummed, value: Any) -> None:
    _write_blob(out, marshal.dumps(value))


def _write_blob(out: BinaryIO | _Checksummed, blob: bytes) -> None:
    # Length-prefixed records read with marshal.loads: marshal.load on a file reads it in tiny pieces.
    out.write(len(blob).to_bytes(8, "little"))
    out.write(blob)


def _read_blob(handle: BinaryIO) -> bytes:
    size = int.from_bytes(handle.read(8), "little")
    if size > os.fstat(handle.fileno()).st_size - handle.tell():
        raise EOFError("a record longer than the index")  # damage: do not try to read (or allocate) it
    blob = handle.read(size)
    if len(blob) != size:
        raise EOFError("the index ends early")
    return blob


def _read_record(handle: BinaryIO) -> Any:
    return marshal.loads(_read_blob(handle))


def _prune(directory: Path) -> None:
    try:
        indexes = sorted(directory.glob("*.idx"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in indexes[MAX_INDEXES:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass


# --- loading ------------------------------------------------------------------------------------
class Loaded:
    """A parser and the counts of a session as far as its index goes."""

    def __init__(self, parser: LineParser, accounting: dict, derived: Any, released_to: int, indexed: int, digest: Any) -> None:
        self.parser, self.accounting, self.derived, self.released_to, self.indexed = parser, accounting, derived, released_to, indexed
        self.digest = digest  # of the indexed bytes, to go on with the bytes read after them


class Damaged(ValueError):
    """The index's bytes are not those that were written."""


def load(path: Path, log: str | os.PathLike, parser_type: type[LineParser], encoding: str,
         texts: LogTexts) -> tuple[Loaded | None, str | None]:
    """The saved index of ``log``, if it is one of this log as it still begins, else None; and a notice
    for the user when the index was damaged (it is then deleted, and rebuilt by the next save). Never raises."""
    try:
        with open(path, "rb") as handle:
            loaded = _read(handle, log, parser_type, encoding, texts)
        if loaded is not None:
            os.utime(path)  # recently used: pruned last
        return loaded, None
    except Damaged:
        path.unlink(missing_ok=True)
        return None, f"the saved index of this log was damaged; ignored, and rebuilt ({path.name})"
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError):
        return None, None  # missing, unreadable, or of another version: read the log afresh


def _read(handle: BinaryIO, log: str | os.PathLike, parser_type: type[LineParser], encoding: str, texts: LogTexts) -> Loaded | None:
    if handle.read(len(MAGIC)) != MAGIC:
        return None
    if not _intact(handle):
        raise Damaged(handle.name)
    try:
        return _read_intact(handle, log, parser_type, encoding, texts)
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise Damaged(f"{handle.name}: {exc}") from None  # written so by a bug, not the disk: still rebuilt


def _read_intact(handle: BinaryIO, log: str | os.PathLike, parser_type: type[LineParser], encoding: str,
                 texts: LogTexts) -> Loaded | None:
    header = _read_record(handle)
    if (header["version"], header["format"], header["encoding"]) != (INDEX_VERSION, parser_type.name, encoding):
        return None
    digest = prefix_digest(log, header["indexed"])
    if digest is None or digest.digest() != header["digest"]:
        return None  # the log no longer begins with what was indexed
    parser = parser_type()
    entries = parser.entries = EntryStore(texts=texts)
    total = header["entries"]
    while len(entries) < total:
        # Every batch is whole but the last (``EntryStore.packed_batches``). Left packed, not decoded:
        # the checksum has already found any damage the disk did.
        entries.adopt(_read_blob(handle), min(entry_store.BATCH, total - len(entries)))
    rest = _read_record(handle)
    malformed, unknown, skipped, torn, examples, kinds, invalid_numbers = rest["diagnostics"]
    parser.diagnostics = Diagnostics(malformed, unknown, skipped, torn, invalid_numbers, list(examples), dict(kinds))
    parser.meta = SessionMeta(*rest["meta"])
    messages, blocks = rest["sidechain"]
    parser.sidechain = SidechainTotals(messages, [decode_block(b, texts) for b in blocks])
    parser.restore_state(rest["state"])
    entries.thaw(parser.settled_before())  # what the lines still to come may change, held as objects
    parser.resume_offset, parser.resume_line = header["indexed"], rest["resume_line"]
    return Loaded(parser, rest["accounting"], _read_record(handle), rest["released_to"], header["indexed"], digest)
