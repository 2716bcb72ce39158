"""Hard constraints: pinned or auto-detected, and their status in a window.

A constraint is ``kept`` when its text is in the window verbatim (whitespace,
width and case aside), ``paraphrased`` when one block holds most of its key
terms but not all its key facts, ``lost`` otherwise — or ``unverifiable`` when
the window holds a summary ctxtop cannot read (an encrypted compaction).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ctxtop.context.rules.facts import has_negation, key_facts, key_terms, normalize
from ctxtop.context.window.replay import Window
from ctxtop.parsers.model import IMAGE, INJECTED, SUMMARY, SYSTEM, TOOL_CALL, TOOL_RESULT, USER, Entry

KEPT, PARAPHRASED, LOST, UNVERIFIABLE = "kept", "paraphrased", "lost", "unverifiable"
# A block that holds at least this share of a constraint's key terms restates it.
PARAPHRASE_TERM_SHARE = 0.5
# Tool calls and their output quote rules (a file read back), they do not restate them.
NOT_RESTATING = frozenset({TOOL_CALL, TOOL_RESULT, IMAGE})


@dataclass(slots=True)
class Constraint:
    id: str
    text: str
    source: str  # "pin" | "auto"
    facts: list[str]
    forbid: list[str] = field(default_factory=list)  # regexes matched against later tool calls
    first_stated: int | None = None  # message where the text first appears in the session
    terms: set[str] = field(default_factory=set)
    normalized: str = ""

    def __post_init__(self) -> None:
        self.terms = key_terms(self.text)
        self.normalized = normalize(self.text)


@dataclass(slots=True)
class Status:
    status: str
    found_in: list[int]  # message numbers where the text (or its paraphrase) was found
    missing_facts: list[str]


def slug(text: str) -> str:
    ascii_words = re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).casefold())
    if ascii_words:
        return "-".join(ascii_words[:5])[:40]
    return "c-" + hashlib.blake2b(normalize(text).encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()


def make_constraint(text: str, source: str, *, id: str | None = None, facts: list[str] | None = None,
                    forbid: list[str] | None = None) -> Constraint:
    return Constraint(id=id or slug(text), text=text.strip(), source=source, facts=facts if facts is not None else key_facts(text),
                      forbid=list(forbid or []))


class WindowText:
    """The window's readable blocks, normalized and split into terms once for all constraints."""

    def __init__(self, window: Window) -> None:
        self.opaque = False
        self.blocks: list[tuple[int, str, str]] = []  # (message, text, normalized text)
        self.window_index: list[int] = []  # where each of ``blocks`` sits in ``window.blocks``
        self.categories: list[str] = []  # the category of each of ``blocks``
        self._by_term: dict[str, list[int]] | None = None
        for index, item in enumerate(window.blocks):
            if item.category == SUMMARY and item.block.opaque:
                self.opaque = True
            elif text := item.text:  # read once: a released text comes back from the log
                self.blocks.append((item.entry.index, text, normalize(text)))
                self.window_index.append(index)
                self.categories.append(item.category)

    def occurrences(self, constraint: Constraint) -> tuple[list[int], int | None]:
        """Positions in ``blocks`` holding the constraint verbatim, and else the best restatement.

        A restatement holds at least PARAPHRASE_TERM_SHARE of the key terms and
        keeps the rule's negation (without it, it says the opposite); it is
        looked for where rules get restated (summaries, people, the agent), not in
        tool calls and their output.
        """
        verbatim = [p for p, (_, _, normalized) in enumerate(self.blocks) if constraint.normalized and constraint.normalized in normalized]
        if verbatim or not constraint.terms:
            return verbatim, None
        shared: dict[int, int] = {}
        postings = self._postings()
        for term in constraint.terms:
            for position in postings.get(term, ()):
                shared[position] = shared.get(position, 0) + 1
        if not shared:
            return verbatim, None
        best = min(shared, key=lambda position: (-shared[position], position))  # the most terms; the first such block
        if shared[best] / len(constraint.terms) < PARAPHRASE_TERM_SHARE:
            return verbatim, None
        if has_negation(constraint.text) and not has_negation(self.blocks[best][1]):
            return verbatim, None
        return verbatim, best

    def _postings(self) -> dict[str, list[int]]:
        """Which restating blocks hold each key term: built once per window, then each constraint
        costs only its own terms' blocks (hundreds of rules × thousands of blocks, otherwise)."""
        if self._by_term is None:
            self._by_term = {}
            for position, category in enumerate(self.categories):
                if category not in NOT_RESTATING:
                    for term in key_terms(self.blocks[position][1]):
                        self._by_term.setdefault(term, []).append(position)
        return self._by_term

    def status(self, constraint: Constraint) -> Status:
        """Where and how well ``constraint`` survives in this window."""
        verbatim, restated = self.occurrences(constraint)
        if verbatim:
            return Status(KEPT, list(dict.fromkeys(self.blocks[p][0] for p in verbatim)), [])
        if restated is not None:
            message, _text, normalized = self.blocks[restated]
            missing = [f for f in constraint.facts if normalize(f) not in normalized]
            return Status(PARAPHRASED, [message], missing)
        return Status(UNVERIFIABLE if self.opaque else LOST, [], list(constraint.facts))


# --- auto-detection --------------------------------------------------------------------
_RULE_PATTERNS = re.compile(
    r"\b(?:must|never|do not|don't|only|always|shall not|no more than|at most|forbidden|prohibited|required to)\b"
    r"|不要|必须|禁止|不能|只允许|不得|务必|严禁|只能|上限|不超过|不可以"
    r"|\b(?:start|begin)s? with\b|\b(?:limit|cap|budget|maximum|max)\b[^.\n]{0,40}\d",
    re.IGNORECASE,
)
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?；;])|\n+|(?<=\.)\s+")
# Only text that people or instruction files wrote states rules; tool output does not.
RULE_SOURCES = (SYSTEM, INJECTED, USER)
MIN_RULE_CHARS, MAX_RULE_CHARS = 6, 240


def detect_constraints(entries: Iterable[Entry]) -> list[Constraint]:
    """Hard-rule sentences stated by the user, the system prompt or instruction files."""
    seen: dict[str, Constraint] = {}
    for entry in entries:
        for block in entry.blocks:
            if block.category not in RULE_SOURCES:
                continue
            for sentence in _SENTENCE_SPLIT.split(block.text):
                sentence = sentence.strip(" \t-*•>#")
                if not (MIN_RULE_CHARS <= len(sentence) <= MAX_RULE_CHARS) or not _RULE_PATTERNS.search(sentence):
                    continue
                key = normalize(sentence)
                if key not in seen:
                    constraint = make_constraint(sentence, "auto")
                    constraint.first_stated = entry.index
                    seen[key] = constraint
    return unique_ids(list(seen.values()))


def locate(constraints: list[Constraint], entries: Sequence[Entry]) -> None:
    """Fill in where each pinned constraint was first stated in the session.

    Rules are stated by people and instruction files, so their text is looked
    for there first; only a pin found nowhere there is looked for in every
    block (tool output too), which may read a big session's texts back.
    """
    pending = [c for c in constraints if c.first_stated is None]
    for categories in (RULE_SOURCES, None):
        for entry in entries:
            if not pending:
                return
            blocks = [b for b in entry.blocks if categories is None or b.category in categories]
            if not blocks:
                continue
            text = normalize("\n".join(b.text for b in blocks))
            for constraint in list(pending):
                if constraint.normalized and constraint.normalized in text:
                    constraint.first_stated = entry.index
                    pending.remove(constraint)


def unique_ids(constraints: list[Constraint]) -> list[Constraint]:
    used: dict[str, int] = {}
    for constraint in constraints:
        count = used.get(constraint.id, 0)
        used[constraint.id] = count + 1
        if count:
            constraint.id = f"{constraint.id}-{count + 1}"
    return constraints
