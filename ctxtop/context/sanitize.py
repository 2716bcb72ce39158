"""Make untrusted log text safe to show: in a terminal, a Markdown or HTML document, JSON, a table.

Log text is whatever tools returned, and file names are whatever was on disk: escape sequences (OSC 52
clipboard writes, title changes, cursor moves), bidi overrides and zero-width characters must never
reach the terminal or a rendered document. The lowest layer of ``context``: every concern that shows
such text (the audit's alert details, the outputs, the guard, the fleet) cleans it with these.
"""

from __future__ import annotations

import re
import shlex

# ESC-introduced sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC (ESC ] ... BEL or ST), and two-byte escapes.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC, DCS, SOS, PM, APC up to their terminator
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|[\x90\x9d\x98\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit OSC/DCS/...
    r"|\x1b[ -/]*[0-~]?"  # any other escape
)
# C0 and C1 controls except tab and newline; DEL; bidi embeddings/overrides/isolates;
# zero-width and invisible formatting characters.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]"
)


# A lone surrogate: what os.fsdecode makes of a file name's byte that is not UTF-8.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with escape sequences and invisible/control characters removed (tab, newline kept)."""
    if text.isprintable():
        return text
    text = text.replace("\r\n", "\n")
    return _INVISIBLE.sub("", _ESCAPE_SEQUENCE.sub("", text))


def clean_json(value: object) -> object:
    """``value`` (JSON-ready data) with every string in it, keys too, cleaned like ``clean_text``."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: clean_json(v) for k, v in value.items()}
    return value


# What a file name cannot show as it is: a backslash (the escape itself), controls, invisible and bidi characters, and
# the lone surrogates os.fsdecode makes of bytes that are not UTF-8.
_NOT_SHOWN_IN_A_NAME = re.compile(
    "[\\\\\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb\ud800-\udfff]")


def shown_name(name: str) -> str:
    """A file name or URL as a table, a report or a JSON record shows it: printable, and still naming that one file.
    What cannot be shown is spelled as bash's $'…' quoting spells it: ``\\x1b`` for a control, ``\\u202e`` for a
    bidi override, ``\\xe9`` for a byte that is not UTF-8, ``\\\\`` for a backslash (so no two names show alike)."""
    if name.isprintable() and "\\" not in name:
        return name
    return _NOT_SHOWN_IN_A_NAME.sub(_spelled, name)


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x5C:
        return "\\\\"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the byte os.fsdecode could not decode
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def shell_word(shown: str) -> str:
    """A name as ``shown_name`` shows it, as one word of a shell command line that names exactly that file: quoted as
    needed, ``./`` before a name that starts with "-" (else an option), $'…' quoting (bash, zsh) where it spells a
    character out."""
    if shown.startswith("-"):
        shown = "./" + shown
    if "\\" in shown:
        return "$'" + shown.replace("'", "\\'") + "'"
    return shlex.quote(shown)


def quoted(text: str) -> str:
    """``text`` quoted as Python's repr quotes it (a newline or a quote escaped), cleaned first: a control
    sequence is dropped, not spelled out as ``\\x1b[2J`` for a reader to puzzle over."""
    return repr(clean_text(text))


def one_line(text: str, width: int | None = None) -> str:
    """A single-line preview: cleaned, whitespace runs folded, cut to ``width`` characters (see ``cut``)."""
    line = " ".join(clean_text(text).split())
    return cut(line, width) if width is not None else line


# An email address, as ``--redact`` masks it (``output.redact`` takes it from here), in any script: "jöhn@münchen.de",
# "иван@почта.рф", "张三@例子.中国". Where its local part starts: the scripts written without spaces between words
# (CJK ideographs, kana, Hangul) give no word boundary to start at, so a local part is either a run of their letters
# or one of other letters, never both: in "见jöhn@x.com" the address is "jöhn@x.com". (A run of CJK letters before
# the "@" is taken whole: "请写信给张三@…" masks "请写信给张三", where no word boundary tells the name from the rest.)
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f"
_MARKS = "\u0300-\u036f"  # combining accents: "jöhn" decomposed (NFD) is j, o, U+0308, h, n
_LETTER = rf"[^\W{_CJK}]"  # a letter, digit or "_" of any other script (\w less CJK)
# At most 64 characters, as RFC 5321 has it: each place a search tries costs no more (a megabyte of "a.a.a." costs
# 64 steps a character, not the rest of the run). Other letters start one at a word's start, as \b did ("-john@…":
# after the sign); CJK letters anywhere in their run, the leftmost that reaches the "@" winning. (The signs beside
# the letters hold no "_", which ``_LETTER`` has: a character either branch could take doubled the ways to try a
# run at each one, and 60 of "_a." took seconds.)
# A Latin-like local part may hold "=", as bounce and forwarding addresses encode another address in theirs (VERP's
# "bounce-mc.us5_1234.5678-jane=example.com@…", SRS's "SRS0=HHH=TT=example.com=jane@…", BATV's "prvs=tag=jane@…"):
# masked from the "=" on, they showed the part before it. Not from an address field's name, though: "EMAIL=",
# "GIT_AUTHOR_EMAIL=", "user.email=", "--to=", "?email=" are no part of the address assigned to them, which starts
# after the "=". (The field's own word comes last, after three words at most, each read once: a few dozen steps where
# a local part may start. Only words naming an address field, not "user" or "contact", which a bounce address's
# encoded local part ends in as well: "list-bounces-jane.user=example.com@…" would have shown "jane.user".)
_FIELD_NAME = (r"(?i:(?:[a-z0-9]{1,32}+[_.\-]){0,3}+"
               r"(?:e-?mail|mail|to|from|cc|bcc|reply[_\-]?to|sender|recipient|author|committer)=)")
EMAIL_LOCAL_PART = (rf"(?:(?<!{_LETTER})(?<![{_MARKS}])(?!{_FIELD_NAME}){_LETTER}(?:{_LETTER}|[{_MARKS}.%+\-=]){{0,63}}"
                    rf"|[{_CJK}][{_CJK}0-9._%+\-]{{0,63}})")
EMAIL_DOMAIN_CHARS = rf"(?:[^\W_]|[{_MARKS}.\-])"  # labels in any script ("münchen", "例子"), dots and hyphens
_LABEL = rf"(?:[^\W_]|[{_MARKS}\-]){{1,63}}"
# The last label: punycode ("xn--p1ai"), or letters of one kind, so that "jöhn@münchen.de见面" ends at "de".
_TOP_LEVEL = rf"(?:(?i:xn--)[A-Za-z0-9\-]+|[^\W\d_{_CJK}]{{2,}}|[{_CJK}]{{2,}})(?!{_LETTER}|[{_MARKS}])"
EMAIL = re.compile(rf"{EMAIL_LOCAL_PART}@{_LABEL}(?:\.{_LABEL})*\.{_TOP_LEVEL}")
_AT_DOMAIN = re.compile(rf"@{_LABEL}(?:\.{_LABEL})*\.{_TOP_LEVEL}")  # EMAIL from its "@"
LOCAL_PART_CHARS = 64  # the most EMAIL_LOCAL_PART reads
CUT_MARK = "…"
ADDRESS_REACH = 320  # past a cut, as far as an address may go on (64 characters of local part, 255 of domain)


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one "…", never inside an email address's local part: the
    cut then falls before the address. ``--redact`` runs on the documents made of such texts, and masks the
    start of a secret or an address a cut leaves ("sk-ant-…", "jo@exam…"), but "john.smi…" is a word to it
    once the "@" is gone. Every text ctxtop shortens for an output is cut here."""
    if len(text) <= width:
        return text
    end = max(0, width - len(CUT_MARK))
    start = _local_run_start(text, 0, end)
    if start < end:
        # The address as --redact finds it: not always from the run's first character ("-john@…", "+john@…": it
        # starts after the sign; "见jöhn@…": after the CJK word). (Not a megabyte run of letters.)
        address = EMAIL.search(text, start, min(len(text), end + ADDRESS_REACH))
        if address is not None and address.start() < end and text.index("@", address.start()) >= end:
            end = address.start()  # its "@" cut off (else shown, and masked)
    return text[:end] + CUT_MARK


def replace_emails(text: str, replacement: str) -> str:
    """``EMAIL.sub(replacement, text)``, with the addresses whose local part is longer than EMAIL reads (64 characters,
    RFC 5321's limit, which reply addresses pass: GitHub's "reply+<80 characters>@reply.github.com") masked whole:
    where the run of local-part characters before an "@" is longer, the run is the local part (EMAIL would take its
    last word, or nothing). Each run is read once: a run ends at an "@"."""
    pieces: list[str] = []
    last = 0
    for found in sorted((*EMAIL.finditer(text), *_AT_DOMAIN.finditer(text)), key=lambda match: match.start()):
        start, end = found.span()
        if start < last:
            continue  # (a domain EMAIL's match masked already)
        at = text.index("@", start)
        run = _local_run_start(text, last, at)
        if at - run > LOCAL_PART_CHARS:
            start = run
        elif found.re is _AT_DOMAIN:
            continue  # an "@" with no address before it ("@mention.io"), or one EMAIL did not take
        pieces += (text[last:start], replacement)
        last = end
    return "".join(pieces) + text[last:] if pieces else text


def _local_run_start(text: str, stop: int, at: int) -> int:
    """Where the run of local-part characters that ends before ``at`` starts (not before ``stop``)."""
    start = at
    while start > stop and _in_local_part(text[start - 1]):
        start -= 1
    return start


def _in_local_part(char: str) -> bool:
    """Whether ``char`` may be part of an email address's local part, in any script (``EMAIL_LOCAL_PART``)."""
    return char.isalnum() or char in "._%+-=" or "\u0300" <= char <= "\u036f"


def markdown_cell(text: object) -> str:
    """A value fit for a Markdown table cell: cleaned, one line, pipes and markup escaped."""
    line = one_line(str(text))
    return re.sub(r"([\\|`*_<>\[\]])", r"\\\1", line)
