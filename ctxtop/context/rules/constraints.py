"""Hard constraints: pinned or auto-detected, and their status in a window.

A constraint is ``kept`` when its text is in the window verbatim (whitespace,
width and case aside), ``paraphrased`` when one block holds most of its key
terms but not all its key facts, ``lost`` otherwise — or ``unverifiable`` when
the window holds a summary ctxtop cannot read (an encrypted compaction).
"""

from __future__ import annotations

import copy
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ctxtop.context import second_core
from ctxtop.context.rules.cues import INSTRUCTIONS, USER_MESSAGE
from ctxtop.context.rules.detect import detect_rules
from ctxtop.context.rules.facts import has_negation, key_facts, key_terms, negated_terms, negates, normalize
from ctxtop.context.rules.naming import readable_id
from ctxtop.context.rules.sources import USER_ORIGIN, source_texts
from ctxtop.context.sanitize import clean_text
from ctxtop.context.window.replay import RUN_STEP, Window
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
    cue: str = ""  # why auto-detection took it: the word or pattern that makes it a rule
    origin: str = ""  # where it was stated: "user message", "system prompt", "instructions: CLAUDE.md"…
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


def make_constraint(text: str, source: str, *, id: str | None = None, facts: list[str] | None = None,
                    forbid: list[str] | None = None) -> Constraint:
    # The facts a restatement must keep are those of the text as shown: not "31" and "0m" of "\x1b[31m…\x1b[0m".
    return Constraint(id=id or readable_id(text), text=text.strip(), source=source,
                      facts=facts if facts is not None else key_facts(clean_text(text)), forbid=list(forbid or []))


class WindowText:
    """The window's readable blocks, normalized and split into terms once for all constraints."""

    def __init__(self, window: Window, earlier: WindowText | None = None) -> None:
        """``earlier``: a window read before this one that may hold some of the same blocks (the window after a
        compaction: its summary is in the window before the next one). What was read of those there (normalized
        text, key terms, negated terms) is taken rather than read again: each is made from the text alone."""
        self.opaque = False
        self.blocks: list[tuple[int, str, str]] = []  # (message, text, normalized text)
        self.window_index: list[int] = []  # where each of ``blocks`` sits in ``window.blocks``
        self.categories: list[str] = []  # the category of each of ``blocks``
        self._by_term: dict[str, list[int]] | None = None
        self._joined: str | None = None  # the normalized blocks, joined (``joined``)
        self._starts: list[int] = []  # where each block starts in ``_joined``
        self._negated: dict[int, set[str]] = {}  # ``negated_terms`` of the blocks that were a best restatement
        self._kept_terms: dict[int, set[str]] = {}  # ``key_terms`` of the summaries, kept for a later window (``_terms``)
        earlier_at = _positions_by_message(earlier.blocks) if earlier is not None else {}
        # Read once, together: a released text comes back from the log.
        for index, (item, text) in enumerate(zip(window.blocks, window.texts(), strict=True)):
            if item.category == SUMMARY and item.block.opaque:
                self.opaque = True
            elif text:
                message = item.entry.index
                self.blocks.append((message, text, self._normalized(message, text, earlier, earlier_at.get(message, []))))
                self.window_index.append(index)
                self.categories.append(item.category)

    def _normalized(self, message: int, text: str, earlier: WindowText | None, candidates: list[int]) -> str:
        """The normalized text of the block about to be added: that of the same block in ``earlier`` (among
        ``candidates``, its blocks of the same message), whose other readings are taken too; else made here.
        (Matched by message, then text: hashing every text of a window to look it up would cost more than it saves.)"""
        if earlier is not None:
            for same in candidates:
                if earlier.blocks[same][1] == text:
                    position = len(self.blocks)
                    if (negated := earlier._negated.get(same)) is not None:
                        self._negated[position] = negated
                    if (terms := earlier._kept_terms.get(same)) is not None:
                        self._kept_terms[position] = terms
                    return earlier.blocks[same][2]
        return normalize(text)

    def occurrences(self, constraint: Constraint) -> tuple[list[int], int | None]:
        """Positions in ``blocks`` holding the constraint verbatim, and else the best restatement.

        A restatement holds at least PARAPHRASE_TERM_SHARE of the key terms and
        keeps the rule's negation where it names the rule's terms (without it, it says the opposite); it is
        looked for where rules get restated (summaries, people, the agent), not in
        tool calls and their output.
        """
        verbatim = self._verbatim(constraint.normalized)
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
        if has_negation(constraint.text) and not negates(self._negated_terms(best), constraint.terms):
            return verbatim, None
        return verbatim, best

    def _verbatim(self, needle: str) -> list[int]:
        """Positions of the blocks whose normalized text holds ``needle``: one search of all blocks joined
        by a newline (which no normalized text holds, so no match spans two), instead of one per block."""
        if not needle:
            return []
        joined, starts, found = self.joined(), self._starts, []
        at = joined.find(needle)
        while at >= 0:
            position = bisect_right(starts, at) - 1
            found.append(position)
            if position + 1 == len(starts):
                break
            at = joined.find(needle, starts[position + 1])  # the next block that holds it
        return found

    def joined(self) -> str:
        """The normalized blocks joined by a newline, which no normalized text holds: a match never spans two
        blocks. Made once for all that search a whole window: ``_verbatim``, the facts lost, the claims."""
        if self._joined is None:
            starts, offset = [], 0
            for _, _, normalized in self.blocks:
                starts.append(offset)
                offset += len(normalized) + 1
            self._starts, self._joined = starts, "\n".join(normalized for _, _, normalized in self.blocks)
        return self._joined

    def _postings(self) -> dict[str, list[int]]:
        """Which restating blocks hold each key term: built once per window, then each constraint
        costs only its own terms' blocks (hundreds of rules × thousands of blocks, otherwise)."""
        if self._by_term is None:
            self._by_term = {}
            for position, category in enumerate(self.categories):
                if category not in NOT_RESTATING:
                    for term in self._terms(position):
                        self._by_term.setdefault(term, []).append(position)
        return self._by_term

    def _terms(self, position: int) -> set[str]:
        """A block's key terms, taken from an earlier window that read the same block, or read here. A summary's
        are kept (tens of KB): the window after a compaction is mostly its summary, which the window before the
        next compaction holds too (about a fifth of the text whose terms that window reads)."""
        terms = self._kept_terms.get(position)
        if terms is None:
            terms = key_terms(self.blocks[position][1])
            if self.categories[position] == SUMMARY:
                self._kept_terms[position] = terms
        return terms

    def _negated_terms(self, position: int) -> set[str]:
        """What the sentences of a block that hold a negation name: read once per block, not once per rule it
        is the best restatement of (one summary is that for most of a window's rules)."""
        negated = self._negated.get(position)
        if negated is None:
            negated = self._negated[position] = negated_terms(self.blocks[position][1])
        return negated

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


def _positions_by_message(blocks: list[tuple[int, str, str]]) -> dict[int, list[int]]:
    """The positions in ``blocks`` (``WindowText.blocks``) of each message's blocks."""
    positions: dict[int, list[int]] = {}
    for position, (message, _, _) in enumerate(blocks):
        positions.setdefault(message, []).append(position)
    return positions


# --- auto-detection --------------------------------------------------------------------
# Only text that people or instruction files wrote states rules; tool output does not.
RULE_SOURCES = (SYSTEM, INJECTED, USER)
# Fewer entries than this are read in one process: a fork costs more than it would save.
MIN_SPLIT_ENTRIES = 2000


@dataclass(slots=True)
class Detected:
    """The rules detected in a session's first ``entries`` entries, by key (``rule_key``) in the order first
    stated: a detection over more of the same entries goes on from it (``detect_constraints``'s ``known``).
    What a text states depends on that text alone, so the rules of a longer stretch are these and, after
    them, those first stated past it."""

    entries: int
    found: dict[str, Constraint]


def detect_constraints(entries: Iterable[Entry], log_format: str | None = None, *, processes: int = 1,
                       known: Detected | None = None) -> list[Constraint]:
    """The hard rules stated by the user, a system prompt they wrote, or their instruction files.

    Harness-written text (reminders, listings, caveats, built-in prompts) is not
    read (``sources``); each rule keeps its cue and where it was first stated.
    ``processes=2``: the later half of the entries read in a fork (``second_core``), when that is safe.
    ``known``: what the first entries state (those entries unchanged since), read from where it ends.
    """
    if not isinstance(entries, Sequence):
        return unique_ids(list(_detected(entries, log_format).values()))
    found = detected_to(entries, len(entries), log_format, known, processes=processes).found
    return unique_ids(list(found.values()))


def detected_to(entries: Sequence[Entry], stop: int, log_format: str | None, known: Detected | None = None, *,
                processes: int = 1) -> Detected:
    """The rules the first ``stop`` entries state, from ``known`` on when it covers no more of them."""
    start, found = 0, {}
    if known is not None and known.entries <= stop:
        # Copies: the ids are made unique in place (``unique_ids``), and ``known`` may serve again.
        start, found = known.entries, {key: copy.copy(constraint) for key, constraint in known.found.items()}
    halves: tuple[dict[str, Constraint], ...]
    if processes > 1 and stop - start >= MIN_SPLIT_ENTRIES and second_core.can_fork():
        middle = (start + stop) // 2
        halves = second_core.both_halves(lambda: _detected(_stretch(entries, start, middle), log_format),
                                         lambda: _detected(_stretch(entries, middle, stop), log_format))
    else:
        halves = (_detected(_stretch(entries, start, stop), log_format),)
    for half in halves:
        for key, constraint in half.items():
            found.setdefault(key, constraint)  # stated in both: first stated in the earlier
    return Detected(stop, found)


# A label that restates or stresses a rule ("Reminder: never …", "再次提醒：不要…"): the rule under it is the one
# stated before, not another. (Only such labels: "Frontend: …" and "Backend: …" may scope two rules alike in words.)
_RESTATING_LABEL = re.compile(r"^\W*(?:(?:as\s+a\s+|a\s+|one\s+more\s+|another\s+)?reminder|remember|again|once\s+more|to\s+repeat|"
                              r"repeat(?:ing)?|(?:please\s+)?note|important|重要|注意|提醒|再次提醒|再提醒一次|重申|再说一遍|记住)"
                              r"\s*[:：,，!！]\s*", re.IGNORECASE)


def rule_key(text: str) -> str:
    """What tells one rule from another: its normalized text, without a label that only restates it."""
    return normalize(_RESTATING_LABEL.sub("", text, count=1))


def _detected(entries: Iterable[Entry], log_format: str | None) -> dict[str, Constraint]:
    """Each rule found, in the order first stated, by its key (``rule_key``)."""
    seen: dict[str, Constraint] = {}
    for source in source_texts(entries, log_format):
        origin = USER_MESSAGE if source.origin == USER_ORIGIN else INSTRUCTIONS
        for found in detect_rules(source.text, origin):
            key = rule_key(found.text)
            if key and key not in seen:
                constraint = make_constraint(found.text, "auto")
                constraint.first_stated, constraint.cue, constraint.origin = source.message, found.cue, source.origin
                seen[key] = constraint
    return seen


def _stretch(entries: Sequence[Entry], start: int, stop: int) -> Iterator[Entry]:
    # A slice at a time: a packed store unpacks what is sliced, all of it at once.
    for at in range(start, stop, RUN_STEP):
        yield from entries[at : min(stop, at + RUN_STEP)]


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
