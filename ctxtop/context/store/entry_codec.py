"""Entries as plain data (tuples, lists, strings, numbers) and back.

The one form in which entries are kept packed in memory (``entry_store``) and
saved to disk (``session_index``): ``marshal`` writes it compactly, and reading
it back runs no code. A released text is kept as where it is, never as what it
says; ``texts`` turns that back into a block that reads it from the log.
"""

from __future__ import annotations

from sys import intern
from typing import Any

from ctxtop.context.store.lazy_text import LogTexts, released_as
from ctxtop.parsers.model import Block, Compaction, Entry, Usage

_new_block = object.__new__


def encode_block(block: Block) -> tuple:
    released = released_as(block)
    return (block.category, None if released else block.text, block.tool_name, block.tool_id, block.is_error, block.opaque,
            list(block.image_size) if block.image_size else None, block.source, released)


def encode_entry(entry: Entry) -> tuple:
    usage = entry.usage
    return (entry.index, entry.role, [encode_block(b) for b in entry.blocks], entry.offset, entry.line, entry.timestamp, entry.model,
            None if usage is None else (usage.prompt_tokens, usage.output_tokens, usage.reasoning_tokens, usage.context_window,
                                        usage.cache_write_tokens, usage.cache_write_5m_tokens, usage.cache_write_1h_tokens,
                                        usage.cache_read_tokens),
            entry.uid, None if entry.compaction is None else _encode_compaction(entry.compaction))


def _encode_compaction(c: Compaction) -> tuple:
    return (c.kind, c.trigger, c.pre_tokens, c.post_tokens, list(c.preserved_ids), list(c.preserved_segment) if c.preserved_segment else None,
            list(c.cleared_tool_ids), None if c.replacement is None else [encode_block(b) for b in c.replacement], c.opaque, c.summary_follows,
            c.summary_after)


def decode_block(item: Any, texts: LogTexts | None) -> Block:
    category, text, tool_name, tool_id, is_error, opaque, image_size, source, released = item
    # Not through Block(): every full pass over a packed session decodes each block again, and the
    # checks and interning there were done when it was built (marshal keeps strings interned).
    block = _new_block(Block)
    block.category, block.tool_name, block.tool_id, block.is_error, block.opaque = category, tool_name, tool_id, is_error, opaque
    block.image_size = tuple(image_size) if image_size else None
    block.source = source
    if released is None:
        block._text, block._lazy = text if text is not None else "", None  # noqa: SLF001 - a codec of the class
    elif texts is None:
        raise ValueError("a released text, and no log to read it back from")
    else:
        texts.restore(block, *released)
    return block


def decode_entry(item: Any, texts: LogTexts | None) -> Entry:
    index, role, blocks, offset, line, timestamp, model, usage, uid, compaction = item
    return Entry(index, intern(role), [decode_block(b, texts) for b in blocks], offset, line, timestamp,
                 intern(model) if model else model, Usage(*usage) if usage else None, uid,
                 _decode_compaction(compaction, texts) if compaction else None)


def _decode_compaction(item: Any, texts: LogTexts | None) -> Compaction:
    kind, trigger, pre, post, preserved_ids, segment, cleared, replacement, opaque, summary_follows, *rest = item
    return Compaction(kind, trigger, pre, post, tuple(preserved_ids), tuple(segment) if segment else None, tuple(cleared),
                      None if replacement is None else [decode_block(b, texts) for b in replacement], opaque, summary_follows,
                      rest[0] if rest else 0)
