"""A saved index of a JSON Lines session, so opening it again parses only what was appended.

After a big log is read (INDEX_MIN_BYTES and up), its entries (big texts as
where they are, not what they say), token counts, content digests and the
parser's carried state are written to the user's cache directory
(``$CTXTOP_CACHE_DIR/index/``). The next open of the same file with the same
format and encoding checks that the file still begins with exactly the bytes
that were indexed (a digest of them, taken while reading) and then feeds the
parser only the bytes after them. Anything else (the log rewritten or
truncated, a damaged or older index) is ignored and the log is read afresh.

The file is written with ``marshal`` (plain data only: loading it runs no
code), in batches, so neither saving nor loading holds a second copy of a big
session. At most MAX_INDEXES are kept, the least recently used dropped first.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import tempfile
from pathlib import Path
from sys import intern
from typing import Any, BinaryIO

from parsers.base import LineParser
from parsers.model import Block, Compaction, Diagnostics, Entry, SessionMeta, SidechainTotals, Usage

from .lazy_text import LogTexts, released_as
from .token_cache import cache_dir

INDEX_VERSION = 1
MAGIC = b"ctxtop-index\n"
INDEX_MIN_BYTES = 8 << 20  # smaller logs read fast enough; their index would only fill the disk
MAX_INDEXES = 20
BATCH = 5000  # entries per marshal record


def index_path(log: str | os.PathLike, format: str, encoding: str) -> Path:
    name = hashlib.blake2b(f"{os.path.realpath(log)}\0{format}\0{encoding}".encode("utf-8", "surrogatepass"), digest_size=16)
    return cache_dir() / "index" / f"{name.hexdigest()}.idx"


def new_digest() -> Any:
    """What the indexed bytes are digested with (``update`` it with them in order)."""
    return hashlib.blake2b(digest_size=20)


def prefix_digest(log: str | os.PathLike, size: int) -> Any:
    """The digest of the first ``size`` bytes of ``log``, open to more bytes (None when it has fewer)."""
    digest = new_digest()
    remaining = size
    try:
        with open(log, "rb") as handle:
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
def save(path: Path, parser: LineParser, accounting_saved: dict, released_to: int, indexed: int, digest: bytes,
         encoding: str) -> None:
    """Write the index of ``parser``'s entries, read from the log's first ``indexed`` bytes (digest ``digest``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".index-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(MAGIC)
            _write(out, {"version": INDEX_VERSION, "format": parser.name, "encoding": encoding, "indexed": indexed,
                          "digest": digest, "entries": len(parser.entries)})
            for start in range(0, len(parser.entries), BATCH):
                _write(out, [_entry(e) for e in parser.entries[start : start + BATCH]])
            d, m = parser.diagnostics, parser.meta
            _write(out, {
                "accounting": accounting_saved, "released_to": released_to, "resume_line": parser.resume_line,
                "diagnostics": [d.malformed_lines, d.unknown_records, d.skipped_records, d.torn_last_line, d.examples],
                "meta": [m.session_id, m.model, m.context_window, m.title, m.cwd],
                "sidechain": [parser.sidechain.messages, [_block(b) for b in parser.sidechain.blocks]],
                "state": parser.carry_state(),
            })
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _prune(path.parent)


def _write(out: BinaryIO, value: Any) -> None:
    # Length-prefixed records read with marshal.loads: marshal.load on a file reads it in tiny pieces.
    blob = marshal.dumps(value)
    out.write(len(blob).to_bytes(8, "little"))
    out.write(blob)


def _read_record(handle: BinaryIO) -> Any:
    size = int.from_bytes(handle.read(8), "little")
    if size > os.fstat(handle.fileno()).st_size - handle.tell():
        raise EOFError("a record longer than the index")  # damage: do not try to read (or allocate) it
    blob = handle.read(size)
    if len(blob) != size:
        raise EOFError("the index ends early")
    return marshal.loads(blob)


def _block(block: Block) -> tuple:
    released = released_as(block)
    return (block.category, None if released else block.text, block.tool_name, block.tool_id, block.is_error, block.opaque,
            list(block.image_size) if block.image_size else None, block.source, released)


def _entry(entry: Entry) -> tuple:
    usage = entry.usage
    return (entry.index, entry.role, [_block(b) for b in entry.blocks], entry.offset, entry.line, entry.timestamp, entry.model,
            None if usage is None else (usage.prompt_tokens, usage.output_tokens, usage.reasoning_tokens, usage.context_window),
            entry.uid, None if entry.compaction is None else _compaction(entry.compaction))


def _compaction(c: Compaction) -> tuple:
    return (c.kind, c.trigger, c.pre_tokens, c.post_tokens, list(c.preserved_ids), list(c.preserved_segment) if c.preserved_segment else None,
            list(c.cleared_tool_ids), None if c.replacement is None else [_block(b) for b in c.replacement], c.opaque, c.summary_follows)


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

    def __init__(self, parser: LineParser, accounting: dict, released_to: int, indexed: int, digest: Any) -> None:
        self.parser, self.accounting, self.released_to, self.indexed = parser, accounting, released_to, indexed
        self.digest = digest  # of the indexed bytes, to go on with the bytes read after them


def load(path: Path, log: str | os.PathLike, parser_type: type[LineParser], encoding: str, texts: LogTexts) -> Loaded | None:
    """The saved index of ``log``, if it is one of this log as it still begins; None otherwise (never raises)."""
    try:
        with open(path, "rb") as handle:
            loaded = _read(handle, log, parser_type, encoding, texts)
        if loaded is not None:
            os.utime(path)  # recently used: pruned last
        return loaded
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError):
        return None  # missing, damaged, or of another version: read the log afresh


def _read(handle: BinaryIO, log: str | os.PathLike, parser_type: type[LineParser], encoding: str, texts: LogTexts) -> Loaded | None:
    if handle.read(len(MAGIC)) != MAGIC:
        return None
    header = _read_record(handle)
    if (header["version"], header["format"], header["encoding"]) != (INDEX_VERSION, parser_type.name, encoding):
        return None
    digest = prefix_digest(log, header["indexed"])
    if digest is None or digest.digest() != header["digest"]:
        return None  # the log no longer begins with what was indexed
    parser = parser_type()
    while len(parser.entries) < header["entries"]:
        parser.entries += [_restore_entry(item, texts) for item in _read_record(handle)]
    rest = _read_record(handle)
    malformed, unknown, skipped, torn, examples = rest["diagnostics"]
    parser.diagnostics = Diagnostics(malformed, unknown, skipped, torn, list(examples))
    parser.meta = SessionMeta(*rest["meta"])
    messages, blocks = rest["sidechain"]
    parser.sidechain = SidechainTotals(messages, [_restore_block(b, texts) for b in blocks])
    parser.restore_state(rest["state"])
    parser.resume_offset, parser.resume_line = header["indexed"], rest["resume_line"]
    return Loaded(parser, rest["accounting"], rest["released_to"], header["indexed"], digest)


def _restore_block(item: Any, texts: LogTexts) -> Block:
    category, text, tool_name, tool_id, is_error, opaque, image_size, source, released = item
    block = Block(category, text if text is not None else "", tool_name, tool_id, is_error, opaque,
                  tuple(image_size) if image_size else None)
    block.source = source
    if released is not None:
        texts.restore(block, *released)
    return block


def _restore_entry(item: Any, texts: LogTexts) -> Entry:
    index, role, blocks, offset, line, timestamp, model, usage, uid, compaction = item
    return Entry(index, role, [_restore_block(b, texts) for b in blocks], offset, line, timestamp,
                 intern(model) if model else model, Usage(*usage) if usage else None, uid,
                 _restore_compaction(compaction, texts) if compaction else None)


def _restore_compaction(item: Any, texts: LogTexts) -> Compaction:
    kind, trigger, pre, post, preserved_ids, segment, cleared, replacement, opaque, summary_follows = item
    return Compaction(kind, trigger, pre, post, tuple(preserved_ids), tuple(segment) if segment else None, tuple(cleared),
                      None if replacement is None else [_restore_block(b, texts) for b in replacement], opaque, summary_follows)
