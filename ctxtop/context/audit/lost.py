"""Facts a compaction lost: paths, identifiers, numbers, rules and decisions the window before held and the window after does not."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ctxtop.context.audit.sentences import sentences
from ctxtop.context.rules.constraints import WindowText
from ctxtop.context.rules.facts import normalize
from ctxtop.context.rules.patterns import KeywordGate, any_of
from ctxtop.parsers.claude_attachments import HOOK_CONTEXT_FRAME
from ctxtop.parsers.model import ASSISTANT, INJECTED, REASONING, SUMMARY, SYSTEM, TOOL_CALL, USER

MAX_LOST_ITEMS = 50

_NEGATIVE_WORDS = ("never", "do not", "don't", "must not", "cannot", "no longer")
_NEGATIVE_WORDS_ZH = ("不要", "禁止", "不能", "不得", "严禁")
_DECISION_WORDS = ("decided", "rejected", "instead of", "chose", "we will use", "won't use", "switched to")
_DECISION_WORDS_ZH = ("否决", "决定", "改用", "放弃", "采用")
_DECISION = re.compile(rf"\b{any_of(_DECISION_WORDS)}\b|{any_of(_DECISION_WORDS_ZH)}", re.IGNORECASE)
_NEGATIVE = re.compile(rf"\b{any_of(_NEGATIVE_WORDS)}\b|{any_of(_NEGATIVE_WORDS_ZH)}", re.IGNORECASE)
_RULE_WORDS = re.compile(f"{_NEGATIVE.pattern}|{_DECISION.pattern}", re.IGNORECASE)
# Every match of _RULE_WORDS holds one of its words as it is: a block without any is not split into sentences.
RULE_WORDS_GATE = KeywordGate(*_NEGATIVE_WORDS, *_NEGATIVE_WORDS_ZH, *_DECISION_WORDS, *_DECISION_WORDS_ZH)
# Candidates of one kind looked at per compaction: enough to find the first 50 lost, bounded on huge windows.
MAX_CANDIDATES = 5000
FACT_SCAN_CHARS = 4000
MAX_HOOK_NAME = 80  # "SessionStart:compact", "PreToolUse:mcp__server__tool"
# Rules and decisions are stated by people, instruction files and the agent itself, not by tool output.
RULE_WRITERS = frozenset({SYSTEM, INJECTED, USER, ASSISTANT, REASONING, SUMMARY})
# A path with an extension; else one with two parts at least from the root (one, "/col" in "row/col" or
# "/tmp", says nothing of the task), or from ~ or . ; never a device ("2>/dev/null" is in every other command).
# The matches of the plain pattern, found with less work: the first kind is tried only where a run of
# name characters starts (or at a ~), as a try inside the run reaches the same end; and a run before a
# "/", or a number's digits before its unit, is never given back (what follows cannot be one of them:
# ``*+``, ``++``, ``?+`` are possessive), where the regex engine would retry the rest at every shorter length.
# A path holds "@" (never cut there): "/home/alice@corp.example.com/x.py" (SSSD's home folders) cut in two gave back an
# address that --redact masks whole in one; "node_modules/@babel/core" is one path too.
_PATH = re.compile(r"(?:~|(?<![\w.\-@])(?:\.{1,2})?)[\w.\-@]*+/[\w.\-/@]+\.\w+|/(?!dev/)[\w.\-@]+/[\w.\-/@]+|~/[\w.\-/@]+|\.{1,2}/[\w.\-/@]{3,}")
# Never from inside a hyphenated word ("sk-ant-api03-AbC…"): a key's body without its prefix is no identifier, and
# --redact, which knows a key by its prefix, could not mask it in the facts lost. ("--dryRun", a flag, is one.)
_IDENT = re.compile(r"\b(?<!\w-)(?:[A-Za-z]++_[A-Za-z0-9_]+|[a-z]++[A-Z][A-Za-z0-9]+|[A-Z][a-z]++[A-Z][A-Za-z0-9]+)\b")
# The digit first, then what precedes it (the same matches as a look-behind first, which the regex
# engine would try at every position rather than only at digits).
# (A unit ends where the word does: "1mb" is no size in the escape sequence "\x1b[1mbold".)
_NUMBER_UNIT = re.compile(r"\d(?<![\w.]\d)[\d,]*+(?:\.\d++)?+\s?+(?:%|元|美元|USD|KB|MB|GB|ms|秒|分钟|小时|天|days?|hours?|tokens?)(?![A-Za-z])",
                          re.IGNORECASE)
# Every identifier _IDENT finds holds an underscore or a lower-case letter before an upper-case one:
# a text with neither holds none, and most tool output is such text.
_CAMEL = re.compile(r"[a-z][A-Z]")
# What follows a key of a JSON object ("file_path": in a tool call's input).
_KEY_END = re.compile(r'"\s*:')


def lost_items(before: WindowText, after: WindowText) -> dict[str, list[str]]:
    """Facts in the window before a compaction that the window after no longer holds.

    A sample, not an inventory: at most MAX_LOST_ITEMS per kind, from the first
    FACT_SCAN_CHARS of each block (a multi-MB tool output is not read whole).
    Rules and decisions are looked for only where people and the agent write.
    """
    after_text = after.joined()
    kinds = ("paths", "identifiers", "numbers", "negative_rules", "decisions")
    # What missing_facts(fact_candidates(before), after) finds, read only as far as needed: the window
    # after a compaction holds little of the one before, so each kind's first MAX_LOST_ITEMS lost come
    # from its first blocks, and the rest of a big window need not be scanned for that kind.
    lost: dict[str, list[str]] = {kind: [] for kind in kinds}
    seen: dict[str, set[str]] = {kind: set() for kind in kinds}
    scanned = dict.fromkeys(kinds, 0)  # candidates found so far, repeats included (fact_candidates' cap)
    open_kinds = set(kinds)

    def consider(kind: str, items: list[str]) -> None:
        kind_lost, kind_seen = lost[kind], seen[kind]
        for item in items:
            if item in kind_seen:
                continue
            kind_seen.add(item)
            if not held(kind, item, after_text):
                kind_lost.append(item)
                if len(kind_lost) == MAX_LOST_ITEMS:
                    open_kinds.discard(kind)
                    return

    def found(kind: str, items: list[str]) -> None:
        """Candidates of a kind read from a block's head, considered; the kind is read no more once
        MAX_CANDIDATES were found (fact_candidates' cap)."""
        scanned[kind] += len(items)
        if scanned[kind] >= MAX_CANDIDATES:
            open_kinds.discard(kind)
        consider(kind, items)

    for text, category in _fact_texts(before):
        if not open_kinds:
            break
        head = text[:FACT_SCAN_CHARS]
        # (Cheap checks first: most tool output holds no path. A block with none of a kind changes nothing.)
        if "paths" in open_kinds and "/" in head and (items := _PATH.findall(head)):  # (no groups: whole matches)
            found("paths", items)
        if "identifiers" in open_kinds and _may_hold_identifier(head) and (items := _identifiers(head, category)):
            found("identifiers", items)
        if "numbers" in open_kinds and (items := _NUMBER_UNIT.findall(head)):
            found("numbers", items)
        if ("negative_rules" not in open_kinds and "decisions" not in open_kinds) or category not in RULE_WRITERS \
                or not _may_state_rules(text):
            continue
        negatives: list[str] = []
        decisions: list[str] = []
        for sentence in sentences(text):
            if 6 <= len(sentence) <= 240:
                if _NEGATIVE.search(sentence):
                    negatives.append(sentence)
                if _DECISION.search(sentence):
                    decisions.append(sentence)
        if "negative_rules" in open_kinds:
            consider("negative_rules", negatives)
        if "decisions" in open_kinds:
            consider("decisions", decisions)
    return lost


def held(kind: str, item: str, after_text: str) -> bool:
    """Whether the window after (normalized, ``after_text``) still holds ``item``. A path from the root or from ~ is
    held too where its last two parts or more are, as a path of their own ("lib/orders/refund.ex" for
    "/home/u/shop/lib/orders/refund.ex", not the end of "backend/lib/orders/refund.ex"): a summary names the files
    of the project it works in from there."""
    if normalize(item) in after_text:
        return True
    if kind != "paths" or not item.startswith(("/", "~")):
        return False
    parts = [part for part in item.split("/") if part]
    return any(_whole_path_in(normalize("/".join(parts[start:])), after_text) for start in range(1, len(parts) - 1))


def _whole_path_in(tail: str, text: str) -> bool:
    """Whether ``tail`` is in ``text`` other than as the end of a longer path (after a "/")."""
    at = text.find(tail)
    while at >= 0:
        if at == 0 or text[at - 1] != "/":
            return True
        at = text.find(tail, at + 1)
    return False


def _may_state_rules(text: str) -> bool:
    """Whether ``text`` holds a rule or decision word: the cheap gate first, then the pattern."""
    return RULE_WORDS_GATE.may_match(text) and _RULE_WORDS.search(text) is not None


def _identifiers(head: str, category: str) -> list[str]:
    """The identifiers in a block's head; in a tool call's input, not its keys: file_path, old_string and the
    like are the tool's parameter names, in every call, and say nothing of the task."""
    if category != TOOL_CALL:
        return _IDENT.findall(head)
    return [m.group(0) for m in _IDENT.finditer(head)
            if not (head[m.start() - 1 : m.start()] == '"' and _KEY_END.match(head, m.end()))]


def _may_hold_identifier(text: str) -> bool:
    # (islower: no upper-case letter at all, so no camelCase join; cheaper than the search)
    return "_" in text or (not text.islower() and _CAMEL.search(text) is not None)


def fact_candidates(before: WindowText) -> dict[str, list[str]]:
    """The facts a window holds that a compaction could lose, by kind, each once (the hooks record them
    before a compaction, to compare with the window after it)."""
    found: dict[str, list[str]] = {"paths": [], "identifiers": [], "numbers": [], "negative_rules": [], "decisions": []}
    for text, category in _fact_texts(before):
        head = text[:FACT_SCAN_CHARS]
        # Cheap substring checks first: most tool output has no path, and a regex pass is not free.
        if "/" in head and len(found["paths"]) < MAX_CANDIDATES:
            found["paths"] += _PATH.findall(head)
        if len(found["identifiers"]) < MAX_CANDIDATES and _may_hold_identifier(head):
            found["identifiers"] += _identifiers(head, category)
        if len(found["numbers"]) < MAX_CANDIDATES:
            found["numbers"] += [m.group(0) for m in _NUMBER_UNIT.finditer(head)]
        if category not in RULE_WRITERS or not _may_state_rules(text):
            continue  # one scan of the block rules out the sentence-by-sentence one
        for sentence in sentences(text):
            if 6 <= len(sentence) <= 240:
                if _NEGATIVE.search(sentence):
                    found["negative_rules"].append(sentence)
                if _DECISION.search(sentence):
                    found["decisions"].append(sentence)
    return {kind: list(dict.fromkeys(items)) for kind, items in found.items()}


def _fact_texts(window: WindowText) -> Iterator[tuple[str, str]]:
    """Each block's text and category, as facts are read from it: an injected text without its hook frame."""
    for (_message, text, _), category in zip(window.blocks, window.categories):
        yield (_without_hook_frame(text) if category == INJECTED else text), category


def _without_hook_frame(text: str) -> str:
    """An injected text without the frame Claude Code puts before a hook's context: the frame names the hook
    ("SessionStart:compact"), no fact of the session, and a compaction that drops it loses nothing worth saying."""
    name, frame, context = text.partition(HOOK_CONTEXT_FRAME)
    return context if frame and len(name) <= MAX_HOOK_NAME and " " not in name else text


def missing_facts(candidates: dict[str, list[str]], after: WindowText) -> dict[str, list[str]]:
    """Of ``candidates`` (``fact_candidates`` of the window before), those ``after`` does not hold."""
    after_text = after.joined()
    result: dict[str, list[str]] = {}
    for kind, items in candidates.items():
        lost: list[str] = []
        for item in items:
            # Each check scans the whole window after: stop at the cap rather than check every item.
            if not held(kind, item, after_text):
                lost.append(item)
                if len(lost) == MAX_LOST_ITEMS:
                    break
        result[kind] = lost
    return result
