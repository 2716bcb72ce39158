"""Cut an instruction text into the units a rule can be: list items and sentences.

Markdown-aware without a Markdown parser (one pass over the lines, linear in
the text): fenced code is skipped, and tables but for their cells that open with
a firm word; headings are remembered (a
rule heading's force carries to the items under it), a list item is one unit
with its wrapped lines, and prose is cut into sentences — never at ``;``,
never inside quotes, never at a line wrap inside a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxtop.context.rules.patterns import compiled_on_use

_FENCE = compiled_on_use(r"^\s*(```|~~~)")
_HEADING = compiled_on_use(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = compiled_on_use(r"^(\s*)(?:[-*+•●▪◦]|\d{1,3}[.)、]|[a-zA-Z][.)]|（?\d{1,3}）)\s+")
_TABLE = compiled_on_use(r"^\s*\|")
_TAG_LINE = compiled_on_use(r"^\s*</?[A-Za-z][\w-]*(?:\s[^>]*)?>\s*$")
# A block an agent's prompt shows as an example (<example_response>, <format_example>, <examples>): a sample of what
# to write, whose words are no rule ("THOUGHT: I need to understand the structure…").
_EXAMPLE_OPEN = compiled_on_use(r"^\s*<([\w-]*example[\w-]*)(?:\s[^>]*)?>\s*$", re.IGNORECASE)
_QUOTE_MARK = compiled_on_use(r"^\s*>\s?")
_OPEN_QUOTES, _CLOSE_QUOTES = "“「『", "”」』"
_CJK = compiled_on_use(r"[\u3400-\u9fff]")


@dataclass(slots=True)
class Unit:
    text: str
    is_item: bool
    headings: tuple[str, ...]  # enclosing headings, outermost first
    lead_in: str | None  # the "…:" line a list item follows, if any
    line: int  # 0-based line where the unit starts


def units(text: str) -> list[Unit]:
    lines = text.splitlines()
    out: list[Unit] = []
    headings: list[tuple[int, str]] = []
    lead_in: str | None = None
    in_fence = False
    paragraph: list[str] = []
    paragraph_start = 0
    item: list[str] | None = None
    item_indent = 0
    item_start = 0
    item_lead_in: tuple[int, str] | None = None  # (indent, text) of an item ending in ":" over deeper items
    item_title: tuple[int, str] | None = None  # (indent, text) of an item that titles deeper items ("1. 路由规范")

    def heading_path() -> tuple[str, ...]:
        return tuple(h for _, h in headings)

    def flush_paragraph() -> None:
        nonlocal paragraph, lead_in, item_lead_in, item_title
        if len(paragraph) == 1 and looks_like_heading(paragraph[0]):
            # "FORBIDDEN ACTIONS", "Do Not", "禁止事项": a heading written without '#'
            while headings and headings[-1][0] >= PSEUDO_HEADING_LEVEL:
                headings.pop()  # such titles are siblings, below the last '#' heading
            headings.append((PSEUDO_HEADING_LEVEL, paragraph[0].strip().rstrip(":：").strip("*_ ")))
            lead_in = item_lead_in = item_title = None
            paragraph = []
            return
        if paragraph:
            for sentence in sentences(_join(paragraph)):
                out.append(Unit(sentence, False, heading_path(), None, paragraph_start))
            last = paragraph[-1].rstrip()
            lead_in = _join(paragraph) if last.endswith((":", "：")) else None
            item_lead_in = item_title = None
            paragraph = []

    def flush_item() -> None:
        nonlocal item
        if item is not None:
            joined = _join(item)
            if joined:
                own_lead_in = item_lead_in[1] if item_lead_in and item_indent > item_lead_in[0] else lead_in
                titled = (item_title[1],) if item_title and item_indent > item_title[0] else ()
                out.append(Unit(joined, True, heading_path() + titled, own_lead_in, item_start))
            item = None

    in_example: str | None = None  # the example block's tag, until it closes
    for number, raw in enumerate(lines):
        if in_example is not None:
            if raw.strip().lower() == f"</{in_example}>":
                in_example = None
            continue
        if (example := _EXAMPLE_OPEN.match(raw)) is not None and not in_fence:
            flush_item()
            flush_paragraph()
            in_example = example.group(1).lower()
            continue
        if _FENCE.match(raw):
            flush_item()
            flush_paragraph()
            in_fence = not in_fence
            continue
        if in_fence or _TABLE.match(raw) or _TAG_LINE.match(raw):
            if not in_fence:
                flush_item()
                flush_paragraph()
                if _TABLE.match(raw):
                    out.extend(Unit(cell, False, heading_path(), None, number) for cell in _rule_cells(raw))
            continue
        line = _QUOTE_MARK.sub("", raw, count=1) if raw.lstrip().startswith(">") else raw
        if not line.strip():
            flush_item()
            flush_paragraph()
            continue
        heading = _HEADING.match(line)
        if heading:
            flush_item()
            flush_paragraph()
            level = len(heading.group(1))
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, heading.group(2).strip()))
            lead_in = None
            continue
        marker = _ITEM.match(line)
        if marker:
            indent = len(marker.group(1))
            if item is not None and indent > item_indent and item[-1].rstrip().endswith((":", "：")):
                item_lead_in = (item_indent, _join(item))  # "- Except for well-known abbreviations:" heads its sub-items
            elif item is not None and indent > item_indent and len(item) == 1 and looks_like_heading(item[0]):
                # "1. 路由规范", "- Git Hygiene": the heading of its sub-items, no unit of its own
                item_title, item = (item_indent, item[0].strip().rstrip(":：").strip("*_ ")), None
            if item_lead_in is not None and indent <= item_lead_in[0]:
                item_lead_in = None
            if item_title is not None and indent <= item_title[0]:
                item_title = None
            flush_item()
            if paragraph:
                flush_paragraph()
            item, item_indent, item_start = [line[marker.end():].strip()], len(marker.group(1)), number
            continue
        indent = len(line) - len(line.lstrip())
        if item is not None and (indent > item_indent or _continues(item[-1], line)):
            item.append(line.strip())
            continue
        flush_item()
        if paragraph and not _continues(paragraph[-1], line):
            flush_paragraph()
        if not paragraph:
            paragraph_start = number
        paragraph.append(line.strip())
    flush_item()
    flush_paragraph()
    return out


# A table is data, but a cell that opens with a firm word is a rule ("| NEVER commit .env files | … |").
_FIRM_CELL = compiled_on_use(r"(?:never|always|must|do\s+not|don[’']?t|only)\b|(?:必须|禁止|不要|严禁|不得|只能|务必|始终|一律)")


def _rule_cells(row: str) -> list[str]:
    """The cells of a table row that open with a firm word (its emphasis aside: "**NEVER** …")."""
    cells = (cell.strip() for cell in row.strip().strip("|").split("|"))
    return [cell for cell in cells if _FIRM_CELL.match(cell.strip("*_` ").lower())]


PSEUDO_HEADING_LEVEL = 7  # deeper than any Markdown heading
_HEADING_WORDS_ZH = compiled_on_use(r"(?:事项|规则|约束|规范|要求|原则|准则|须知|说明|示例|流程|步骤|红线|清单)[:：]?$")


def looks_like_heading(line: str) -> bool:
    """A short title-case, upper-case or Chinese title line with no sentence punctuation."""
    text = line.strip().strip("*_ ").rstrip(":：").strip()
    if not text or len(text) > 40 or text[-1] in ".!?。！？;；,，":
        return False
    if _CJK.search(text):
        return len(text) <= 10 and bool(_HEADING_WORDS_ZH.search(text))
    words = re.findall(r"[A-Za-z][\w'&-]*", text)
    return 1 <= len(words) <= 5 and all(w[0].isupper() or w.lower() in ("and", "or", "of", "the", "to", "for", "not") for w in words)


def _continues(previous: str, line: str) -> bool:
    """Whether ``line`` carries on the sentence ``previous`` was wrapped in."""
    previous, line = previous.rstrip(), line.strip()
    if not previous or not line:
        return False
    if previous.endswith((".", "!", "?", ":", "。", "！", "？", "：")):
        return False
    if _CJK.search(previous[-1]) or _CJK.match(line[0]):
        return False  # CJK text is not wrapped at a line end
    return line[0].islower() or previous.endswith((",", "，", "(", "-", "—", "and", "or", "the", "a", "to", "of"))


def _join(parts: list[str]) -> str:
    text = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if text and not (_CJK.search(text[-1]) and _CJK.match(part[0])):
            text += " "
        text += part
    return text


_SENTENCE_MARKS = compiled_on_use(r"[`\"“”「」『』。！？.!?]")


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: cut after . ! ? followed by a space, and after 。！？ — outside quotes and code.

    Only the characters that matter are visited (a regex finds them), so a long paragraph costs
    what its quotes and full stops cost, not a Python step per character.
    """
    found: list[str] = []
    start = 0
    depth = 0
    straight = False
    backtick = False
    length = len(text)
    for mark in _SENTENCE_MARKS.finditer(text):
        i = mark.start()
        ch = text[i]
        if ch == "`":
            backtick = not backtick
        elif backtick:
            continue
        elif ch in _OPEN_QUOTES:
            depth += 1
        elif ch in _CLOSE_QUOTES:
            depth = max(0, depth - 1)
        elif ch == '"':
            straight = not straight
        elif depth or straight or i < start:
            continue
        elif ch in "。！？" or ((i + 1 == length or text[i + 1] in " \t") and not _abbreviation(text, i)):
            end = i + 1
            while end < length and text[end] in "\"”」』)）*":
                end += 1
            piece = text[start:end].strip()
            if piece:
                found.append(piece)
            start = end
    rest = text[start:].strip()
    if rest:
        found.append(rest)
    return found


_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "e.g", "i.e")


def _abbreviation(text: str, dot: int) -> bool:
    before = text[max(0, dot - 7) : dot + 1].lower()
    return any(before.endswith(a) for a in _ABBREVIATIONS) or (dot >= 1 and text[dot - 1].isdigit() and dot + 2 < len(text) and text[dot + 2].isdigit())
