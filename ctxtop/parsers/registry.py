"""Which parsers exist, and which one a given log needs (detected from its content)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxtop.parsers import (
    adk,
    claude_code,
    cline,
    codex,
    gemini,
    inspect_ai,
    messages,
    opencode,
    openhands,
    swe_agent,
)
from ctxtop.parsers.base import DocumentParser, LineParser, Parser, UnknownFormat
from ctxtop.parsers.jsonl import DecodeError, Log, iter_lines, loads
from ctxtop.parsers.tree import Tree, TreeParser

PARSERS: dict[str, type[Parser]] = {
    cls.name: cls
    for cls in (
        claude_code.ClaudeCodeParser,
        codex.CodexParser,
        messages.AnthropicRequestParser,
        messages.OpenAIMessagesParser,
        openhands.OpenHandsParser,
        gemini.GeminiJsonlParser,
        gemini.GeminiChatParser,
        swe_agent.SweAgentParser,
        adk.AdkSessionParser,
        inspect_ai.InspectParser,
        openhands.OpenHandsEventsParser,
        cline.ClineTaskParser,
        opencode.OpencodeParser,
    )
}
# Folder-shaped formats, told apart by the names of the files they hold.
TREE_FORMATS: list[tuple[Callable[[Any], bool], str]] = [
    (cline.looks_like, cline.ClineTaskParser.name),
    (openhands.looks_like_tree, openhands.OpenHandsEventsParser.name),
    (opencode.looks_like, opencode.OpencodeParser.name),
]
# Whole-document formats, most specific first: the generic message dumps come last.
DOCUMENT_FORMATS: list[tuple[Callable[[Any], bool], str]] = [
    (openhands.looks_like, openhands.OpenHandsParser.name),
    (gemini.looks_like_document, gemini.GeminiChatParser.name),
    (swe_agent.looks_like, swe_agent.SweAgentParser.name),
    (adk.looks_like, adk.AdkSessionParser.name),
    (inspect_ai.looks_like, inspect_ai.InspectParser.name),
    (messages.looks_like_anthropic, messages.AnthropicRequestParser.name),
    (messages.looks_like_openai, messages.OpenAIMessagesParser.name),
]
# How many leading records detection looks at before giving up.
SNIFF_LINES = 25




def detect(data: Log) -> str:
    """The name of the format of ``data``, from its first records."""
    if bytes(data[:4]) == inspect_ai.ZIP_MAGIC:
        if inspect_ai.read_eval_zip(data) is not None:
            return inspect_ai.InspectParser.name
        raise UnknownFormat("a zip archive that is not an Inspect AI .eval log")
    if bytes(data[:2]) == GZIP_MAGIC:
        raise UnknownFormat("gzip-compressed: decompress it first (gunzip -k FILE), then open what it gives")
    if _utf16_json(bytes(data[:256])):
        raise UnknownFormat("UTF-16 text: ctxtop reads UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.jsonl converts it)")
    head_records: list[Any] = []
    for _offset, _number, raw, _complete in iter_lines(data):
        head_records.append(_head_record(raw))
        if len(head_records) >= SNIFF_LINES:
            break
    for record in head_records:
        if not isinstance(record, dict):
            continue
        if _looks(codex.looks_like, record):
            return codex.CodexParser.name
        if _looks(claude_code.looks_like, record):
            return claude_code.ClaudeCodeParser.name
        if _looks(gemini.looks_like_record, record) and (len(head_records) > 1 or _looks(gemini.looks_like_header, record)):
            return gemini.GeminiJsonlParser.name
    document = _whole_document(data, head_records)
    if document is not None:
        for looks_like, name in DOCUMENT_FORMATS:
            if _looks(looks_like, document):
                return name
    if document is None and head_records and head_records[0] is None and _cut_short(data):
        # (Before the lines are taken for messages: a few complete objects inside it are no JSON Lines log.)
        raise UnknownFormat("a JSON document that ends before it is complete (cut short, or still being written)")
    decoded = [r for r in head_records if r is not None]
    if decoded and all(isinstance(r, dict) and isinstance(r.get("role"), str) for r in decoded):
        return messages.OpenAIMessagesParser.name
    raise UnknownFormat("not a session log ctxtop knows (see `ctxtop formats`, or name one with --log-format)")


# The bytes a JSON value can start with: a line starting with another is none, whatever follows.
_JSON_VALUE_START = frozenset(b'{["-0123456789tfn')


def _head_record(raw: Log | memoryview) -> Any:
    """One of the first lines, decoded; None when it is no JSON. Told by its first byte where it can be: a file of
    2 GB of zeros (no newline: one line) was decoded whole only to be refused."""
    start = _first_byte(raw)
    if start and start[0] not in _JSON_VALUE_START:
        return None
    try:
        return loads(raw)
    except DecodeError:
        return None


def one_session(sample: int, kind: str) -> None:
    """Raise UnknownFormat for a sample asked of what holds one session ("LOG#2" of a JSON Lines log, a folder, a
    database): it names none, and is not its first, unsaid. ``kind`` says what was opened ("a codex log")."""
    if sample != 1:
        raise UnknownFormat(f"no sample {sample}: {kind} holds one session")


def _cut_short(data: Log) -> bool:
    """Whether ``data`` opens a JSON document (``{`` or ``[``) and stops before its end: its last character is not the
    closing one a whole document ends with. Looked at only where its first line is no JSON either."""
    tail = bytes(data[-64:]).rstrip()
    return _opens_a_document(data) and bool(tail) and tail[-1:] not in (b"}", b"]")


def _opens_a_document(data: Log) -> bool:
    """Whether ``data`` starts as a JSON object or array does (after a byte order mark and blanks)."""
    return _first_byte(data) in (b"{", b"[")


def _first_byte(data: Log | memoryview) -> bytes:
    """The first byte of ``data`` after a byte order mark and blanks (within its first 64 bytes; empty if none)."""
    return bytes(data[:64]).removeprefix(b"\xef\xbb\xbf").lstrip()[:1]


GZIP_MAGIC = b"\x1f\x8b"


def _utf16_json(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) is JSON written in UTF-16, as PowerShell 5's ``>`` writes text: with
    its byte order mark, or without one, told by the NUL byte beside each ASCII character."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        encoding = "utf-16"
    elif len(head) >= 4 and head[1] == head[3] == 0 and head[0] and head[2]:
        encoding = "utf-16-le"
    elif len(head) >= 4 and head[0] == head[2] == 0 and head[1] and head[3]:
        encoding = "utf-16-be"
    else:
        return False
    text = head[: len(head) // 2 * 2].decode(encoding, "replace").lstrip("\ufeff \t\r\n")
    return text[:1] in ("{", "[")


def _looks(looks_like: Callable[[Any], bool], value: Any) -> bool:
    """``looks_like(value)``, and no when the value's fields are of types it does not expect (a record
    whose "type" is a list, say): a record that does not look like the format's."""
    try:
        return bool(looks_like(value))
    except (TypeError, AttributeError, KeyError, ValueError):
        return False


def _whole_document(data: Log, head_records: list[Any]) -> Any:
    if len(head_records) == 1 and head_records[0] is not None:
        return head_records[0]
    if not _opens_a_document(data):
        return None  # (every document format opens so: 2 GB of zeros decoded whole took 6 GB to refuse)
    try:
        return loads(data)
    except DecodeError:
        return None


# Big logs are parsed in slices of about this many bytes, so progress can be reported.
PROGRESS_SLICE = 8 << 20


def parse(data: Log, format: str | None = None, *, final: bool = True,
          progress: Callable[[float], None] | None = None, sample: int = 1) -> Parser:
    """Parse a whole log; returns the parser, which holds entries and diagnostics.

    With ``final=False`` (a log still being written) a last line without its
    newline is left unparsed; ``parser.resume_offset`` says where to go on.
    ``progress(fraction)`` is called as the bytes are parsed; ``sample`` picks
    one sample of a log that holds several (Inspect AI).
    """
    name = format or detect(data)
    if name not in PARSERS:
        raise UnknownFormat(f"unknown format {name!r} (known: {', '.join(PARSERS)})")
    parser = PARSERS[name]()
    if hasattr(parser, "sample"):
        parser.sample = sample
    else:
        one_session(sample, f"a {name} log")
    parser.resume_offset = len(data)
    if isinstance(parser, LineParser):
        parser.resume_offset = _feed_in_slices(parser, data, final, progress)
    elif isinstance(parser, DocumentParser):
        document, offsets = _document_or_lines(data, parser, sample)
        try:
            parser.parse(document, offsets)
        except UnknownFormat:
            raise  # (a ValueError, with its own reason: a sample the log does not have)
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            # A line format loses only the record (LineParser._dispatch); a document is one record.
            raise UnknownFormat(f"cannot read this {parser.name} log: a field of an unexpected type ({type(exc).__name__})") from None
    return parser


def _feed_in_slices(parser: LineParser, data: Log, final: bool, progress: Callable[[float], None] | None) -> int:
    if progress is None:
        return parser.feed(data, final=final)
    size, position, line = len(data), 0, 1
    while True:
        cut = data.find(b"\n", position + PROGRESS_SLICE)
        if cut == -1:
            return parser.feed(data, position, line, final=final)
        position = parser.feed(data, position, line, final=False, stop=cut + 1)
        line = parser.resume_line
        progress(position / size)


def _document_or_lines(data: Log, parser: Parser, sample: int = 1) -> tuple[Any, list[int] | None]:
    """A single JSON document, or JSON Lines of messages gathered into a list."""
    archive = inspect_ai.read_eval_zip(data, sample)
    if archive is not None:
        return archive, None
    try:
        return loads(data), None
    except DecodeError:
        pass
    records, offsets = [], []
    for offset, number, raw, _complete in iter_lines(data):
        try:
            records.append(loads(raw))
            offsets.append(offset)
        except DecodeError as exc:
            parser.malformed(number, f"not JSON ({exc})")
    return records, offsets


def detect_database(head: bytes) -> str | None:
    """The format kept in a database file whose first bytes are ``head``, or None."""
    return next((name for name, parser in PARSERS.items() if parser.database_magic and head.startswith(parser.database_magic)), None)


def split_sample_suffix(text: str) -> tuple[str, int] | None:
    """``log.eval#3`` → (``log.eval``, 3): the third sample of a log that holds several; None without a suffix.

    Whether the suffix is one (and not part of a file's real name) the caller tells from the files there are.
    """
    base, hash_mark, number = text.rpartition("#")
    if hash_mark and base and number.isdigit() and number.isascii():
        return base, int(number)
    return None


def detect_tree(names: list[str] | Tree) -> str | None:
    """The folder format whose files ``names`` are, or None."""
    listing = dict.fromkeys(names)
    for looks_like, name in TREE_FORMATS:
        if looks_like(listing):
            return name
    return None


def parse_tree(files: Tree, format: str | None = None) -> Parser:
    """Parse a session kept as a folder of files."""
    name = format or detect_tree(files)
    if name is None:
        raise UnknownFormat("a folder ctxtop does not know as a session (see `ctxtop formats`)")
    parser = PARSERS.get(name)
    if parser is None or not issubclass(parser, TreeParser):
        raise UnknownFormat(f"{name!r} is not a folder format")
    instance = parser()
    instance.parse_tree(files)
    return instance
