"""Inspect AI eval logs: `.json` (one document) and `.eval` (a zip of header and samples).

A log holds many samples; ctxtop shows one: the first, or the N-th when the
path is given as `LOG#N` (the number of samples is noted in the diagnostics). A sample's `messages` are chat messages (content a
string or a list of parts, `tool_calls`, `tool_call_id`). Its `events` carry the
ground truth: the last `model` event's `output.usage` (see ``prompt_tokens``: two
conventions), and `compaction` events (`tokens_before`,
`tokens_after`): a summary message (`metadata.summary`) marks where it happened.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any

from ctxtop.parsers.base import DocumentParser, UnknownFormat
from ctxtop.parsers.content import listed, mapping, user_text_category
from ctxtop.parsers.jsonl import Log, json_text, loads
from ctxtop.parsers.model import (
    ASSISTANT,
    IMAGE,
    REASONING,
    SUMMARY,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESULT,
    Block,
    Compaction,
    Usage,
)
from ctxtop.parsers.numbers import count, number, summed

ZIP_MAGIC = b"PK\x03\x04"


def looks_like(document: Any) -> bool:
    return isinstance(document, dict) and "eval" in document and "version" in document and "samples" in document or (
        isinstance(document, dict) and document.get("_inspect_eval_zip") is True)


# What one member of an `.eval` archive may decompress to: 100 times its compressed size (deflated
# JSON is 3 to 20 times smaller; deflate's most is about 1,000), at least 16 MB, at most 1 GB. A zip
# bomb (1 MB that inflates to gigabytes) is refused before it fills memory.
MAX_INFLATION = 100
MIN_MEMBER_LIMIT = 16 << 20
MAX_MEMBER_BYTES = 1 << 30


class ArchiveTooLarge(UnknownFormat):
    """An archive member that would decompress past the limits; the message says which and how far."""


def member_limit(compressed: int) -> int:
    return min(MAX_MEMBER_BYTES, max(MIN_MEMBER_LIMIT, MAX_INFLATION * compressed))


def _read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes, never more than its limit: its declared size is checked first, and no more
    than the limit is ever inflated whatever the header says."""
    info = archive.getinfo(name)
    limit = member_limit(info.compress_size)
    refusal = (f"{name} in the archive decompresses to more than {limit >> 20:,} MB ({info.compress_size:,} bytes "
               f"compressed; at most {MAX_INFLATION}× that, and {MAX_MEMBER_BYTES >> 20:,} MB, are read): refused, a zip bomb?")
    if info.file_size > limit:
        raise ArchiveTooLarge(refusal)
    with archive.open(info) as member:
        data = member.read(limit + 1)
    if len(data) > limit:
        raise ArchiveTooLarge(refusal)
    return data


def read_eval_zip(data: Log, sample: int = 1) -> dict | None:
    """An `.eval` archive as the `.json` log shape (header fields plus the one `sample` asked for), or None.

    Raises ArchiveTooLarge when a member it reads would decompress past its limit."""
    if bytes(data[:4]) != ZIP_MAGIC:
        return None
    try:
        archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
        document = loads(_read_member(archive, "header.json"))
        names = sorted(n for n in archive.namelist() if n.startswith("samples/") and n.endswith(".json"))
        chosen = names[sample - 1] if 0 < sample <= len(names) else None
        document["samples"] = [loads(_read_member(archive, chosen))] if chosen else []
        document["_sample_files"] = len(names)
        document["_sample_offset"] = sample - 1
        document["_inspect_eval_zip"] = True
        return document
    except ArchiveTooLarge:
        raise
    except (zipfile.BadZipFile, zlib.error, KeyError, TypeError, ValueError, OSError, RecursionError, NotImplementedError, EOFError):
        return None


class InspectParser(DocumentParser):
    sample = 1  # which sample to show (1-based); set from `LOG#N` before parsing
    name = "inspect-ai"
    description = "Inspect AI eval log (.json or .eval): its first sample, or the N-th as LOG#N"
    locations = ("./logs/*.eval", "./logs/*.json")

    def parse(self, document: Any, offsets: list[int] | None = None) -> None:
        if not looks_like(document):
            self.malformed(1, "not an Inspect AI log")
            return
        samples = [s for s in listed(document.get("samples")) if isinstance(s, dict)]
        count = document.get("_sample_files", len(samples))
        wanted = self.sample  # 1-based
        if count > 1 or wanted != 1:
            self.diagnostics.note(f"sample {wanted} of {count} (open another with LOG#N)")
        eval_info = mapping(document.get("eval"))
        if isinstance(eval_info.get("model"), str):
            self.meta.model = eval_info["model"].split("/", 1)[-1]
        index = wanted - 1 - document.get("_sample_offset", 0)
        if not 0 <= index < len(samples):
            if count:
                raise UnknownFormat(f"no sample {wanted}: the log has {count}")
            return
        sample = samples[index]
        self.meta.session_id = str(sample.get("id")) if sample.get("id") is not None else None
        events = [e for e in listed(sample.get("events")) if isinstance(e, dict) and e.get("event") == "compaction"]
        # A summary compaction writes the summary message it is paired with, in order. An edit or a trim writes
        # none, and the messages it dropped are not in the sample's (its final) messages: it has no place here.
        compactions = [e for e in events if e.get("type", "summary") == "summary"]
        unplaced = len(events) - len(compactions)
        if unplaced:
            self.diagnostics.note(f"{unplaced} compaction(s) by edit or trim: not shown (the log keeps no trace of "
                                  "what they dropped; an implicit compaction may still be seen in the usage)")
        # Each model call's usage, by the id of the reply it wrote: the message it is logged on.
        by_reply = {reply: usage for reply, usage in _model_usages(listed(sample.get("events"))) if reply is not None}
        replies = len(by_reply)
        # Messages carry no time: a reply has its model call's, the first message the sample's start.
        written_at = _reply_times(listed(sample.get("events")))
        started = _sample_start(sample)
        for message in listed(sample.get("messages")):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                self.malformed(0, "a message without a role")
                continue
            blocks = _blocks(message)
            compaction = None
            metadata = mapping(message.get("metadata"))
            if metadata.get("summary") and compactions:
                event = compactions.pop(0)
                # `messages` is what the sample ended with: everything before the summary survived it.
                kept = tuple(e.uid for e in self.entries if e.uid)
                details = mapping(event.get("metadata"))
                compaction = Compaction("inspect_compaction", trigger=details.get("trigger"),
                                        pre_tokens=event.get("tokens_before"), post_tokens=event.get("tokens_after"),
                                        preserved_ids=kept)
                blocks = [Block(SUMMARY, b.text) if b.category not in (IMAGE,) else b for b in blocks]
            if blocks:
                uid = message.get("id") if isinstance(message.get("id"), str) else None  # (an entry's uid is a string or none)
                timestamp = written_at.get(uid) if uid is not None and message["role"] == "assistant" else None
                self.add_entry(message["role"], blocks, 0, 0, uid=uid, compaction=compaction,
                               timestamp=timestamp if timestamp is not None or self.entries else started,
                               model=message.get("model") if isinstance(message.get("model"), str) else None,
                               usage=by_reply.pop(uid, None) if uid is not None and message["role"] == "assistant" else None)
        if self.entries and len(by_reply) == replies:  # no call's usage was taken by its reply
            # Replies without ids (or calls whose replies are not in the messages): the last call's usage is
            # the size of the window at the end, at least.
            usage = next((usage for _, usage in reversed(_model_usages(listed(sample.get("events"))))), None)
            if usage is not None:
                self.entries[-1].usage = self.checked_usage(usage)


def _blocks(message: dict) -> list[Block]:
    role, content = message["role"], message.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content if isinstance(content, str) else ""}]
    blocks = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "reasoning":
            blocks.append(Block(REASONING, str(part.get("reasoning") or part.get("summary") or ""), opaque=bool(part.get("redacted"))))
        elif kind == "image":
            blocks.append(Block(IMAGE, ""))
        elif isinstance(part.get("text"), str) and part["text"]:
            text = part["text"]
            if role == "system":
                blocks.append(Block(SYSTEM, text))
            elif role == "assistant":
                blocks.append(Block(ASSISTANT, text))
            elif role == "tool":
                blocks.append(Block(TOOL_RESULT, text, tool_id=message.get("tool_call_id"), tool_name=message.get("function")))
            else:
                blocks.append(Block(user_text_category(text), text))
    for call in listed(message.get("tool_calls")):
        if isinstance(call, dict):
            blocks.append(Block(TOOL_CALL, json_text(call.get("arguments", {})), tool_name=call.get("function"), tool_id=call.get("id")))
    if role == "tool" and not any(b.category == TOOL_RESULT for b in blocks):
        blocks.append(Block(TOOL_RESULT, "", tool_id=message.get("tool_call_id"), tool_name=message.get("function")))
    return blocks


def _model_calls(events: list) -> Iterator[tuple[dict, str | None]]:
    """Each model event, in order, with the id of the reply it wrote (None when it has none)."""
    for event in events:
        if isinstance(event, dict) and event.get("event") == "model":
            choices = listed(mapping(event.get("output")).get("choices"))
            reply = mapping(mapping(choices[0]).get("message")).get("id") if choices else None
            yield event, reply if isinstance(reply, str) else None


def _model_usages(events: list) -> list[tuple[str | None, Usage]]:
    """Each model event's usage, in order, with the id of the reply it wrote (None when it has none)."""
    found: list[tuple[str | None, Usage]] = []
    for event, reply in _model_calls(events):
        output = mapping(event.get("output"))
        usage = output.get("usage") if isinstance(output.get("usage"), dict) else None
        if usage and number(usage.get("input_tokens")) is not None:  # checked by checked_usage, as every usage
            found.append((reply, Usage(prompt_tokens(usage), number(usage.get("output_tokens")) or 0,
                                       reasoning_tokens=number(usage.get("reasoning_tokens")))))
    return found


def _reply_times(events: list) -> dict[str, str]:
    """When each model call's reply was written (its event's ``completed``, else when the call began), by reply id."""
    times: dict[str, str] = {}
    for event, reply in _model_calls(events):
        written = next((t for t in (event.get("completed"), event.get("timestamp")) if isinstance(t, str)), None)
        if reply is not None and written is not None:
            times[reply] = written
    return times


def _sample_start(sample: dict) -> str | None:
    """When the sample began: its ``started_at`` (Inspect 0.3.9x+ when set), else its first event's time."""
    if isinstance(sample.get("started_at"), str):
        return sample["started_at"]
    first = next((e for e in listed(sample.get("events")) if isinstance(e, dict)), None)
    return first.get("timestamp") if first is not None and isinstance(first.get("timestamp"), str) else None


def prompt_tokens(usage: dict) -> int:
    """The prompt size of one model call from an Inspect ``ModelUsage``.

    Inspect <= 0.3.x logs (e.g. 0.3.95 with OpenAI models) count cache reads inside
    ``input_tokens`` — there ``total_tokens == input_tokens + output_tokens`` — while
    newer logs keep ``input_tokens`` for the uncached part, and the cache reads and
    writes come on top (``total_tokens`` then counts them too). The usage tells which.
    """
    input_tokens = usage["input_tokens"]
    checked = summed(input_tokens, usage.get("input_tokens_cache_read"), usage.get("input_tokens_cache_write"))
    if count(checked) is None:
        return checked  # one of them is no count: Parser.checked_usage counts it and ignores the usage
    cached = _count(usage.get("input_tokens_cache_read")) + _count(usage.get("input_tokens_cache_write"))
    total, output = usage.get("total_tokens"), _count(usage.get("output_tokens"))
    if cached and isinstance(total, int) and total == input_tokens + output:
        return input_tokens  # the cached tokens are already in input_tokens
    return input_tokens + cached


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
