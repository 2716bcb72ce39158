"""The compaction audit: what each compaction did to the constraints and the facts.

For every compaction (explicit markers, and implicit ones: the reported prompt
falling by more than 30% between two model calls with no marker), compare the
window just before with the window the model sees at its first call after:
constraint status before → after, facts that vanished, and the drift that
follows (the agent re-running calls and re-reading files it already had).
Tool calls are also checked against what each constraint forbids.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from parsers.model import (
    ASSISTANT,
    INJECTED,
    REASONING,
    SUMMARY,
    SYSTEM,
    TOOL_CALL,
    USER,
    Block,
    Entry,
)

from .audit_cache import AuditCache, pair_key, window_key
from .constraints import KEPT, Constraint, Status, WindowText
from .facts import NEGATIONS, normalize
from .session import CompactionEvent, Session
from .window import RUN_STEP, Replay, Window

# Alert kinds that mean a rule was lost or broken (they fail `ctxtop check`, and raise the TUI's banner);
# the others (implicit compactions, drift) are notes.
FAILING_KINDS = frozenset({"constraint_lost", "constraint_paraphrased", "constraint_unverifiable", "violation"})
IMPLICIT_DROP = 0.30  # a fall of the reported prompt by more than this share, unmarked, is a compaction
DRIFT_REPEAT_ALERT = 3  # a call repeated more often than this after a compaction is drift
MAX_LOST_ITEMS = 50

_DECISION = re.compile(r"\b(?:decided|rejected|instead of|chose|we will use|won't use|switched to)\b|否决|决定|改用|放弃|采用", re.IGNORECASE)
_NEGATIVE = re.compile(r"\b(?:never|do not|don't|must not|cannot|no longer)\b|不要|禁止|不能|不得|严禁", re.IGNORECASE)
_RULE_WORDS = re.compile(f"{_NEGATIVE.pattern}|{_DECISION.pattern}", re.IGNORECASE)
# Candidates of one kind looked at per compaction: enough to find the first 50 lost, bounded on huge windows.
MAX_CANDIDATES = 5000
FACT_SCAN_CHARS = 4000
# Rules and decisions are stated by people, instruction files and the agent itself, not by tool output.
RULE_WRITERS = frozenset({SYSTEM, INJECTED, USER, ASSISTANT, REASONING, SUMMARY})
_PATH = re.compile(r"(?:~|\.{1,2})?[\w.\-]*/[\w.\-/]+\.\w+|(?:~|\.{1,2})?/[\w.\-/]{3,}")
_IDENT = re.compile(r"\b(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z]+[A-Z][A-Za-z0-9]+)\b")
_NUMBER_UNIT = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:%|元|美元|USD|KB|MB|GB|ms|秒|分钟|小时|天|days?|hours?|tokens?)", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[。！？!?；;])|\n+|(?<=\.)\s+")
PHONE = re.compile(r"(?<!\d)(?:\+?86[- ]?)?1[3-9]\d(?:[- ]?\d{4}){2}(?!\d)|\+\d{1,3}[ -]?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{3,4}")
_AMOUNT_KEYS = re.compile(r"amount|total|price|cost|budget|sum|金额|总价|费用", re.IGNORECASE)
_CAP = re.compile(r"(?:上限|cap|limit|at most|no more than|不超过|budget|预算|max(?:imum)?)\D{0,12}(\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)


@dataclass(slots=True)
class Alert:
    kind: str  # constraint_lost | constraint_paraphrased | constraint_unverifiable | violation | implicit_compaction | drift
    message: int
    compaction: int | None
    constraint: str | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "compaction": self.compaction, "constraint": self.constraint, "detail": self.detail}


@dataclass(slots=True)
class CompactionAudit:
    event: CompactionEvent
    after_message: int  # the message whose window counts as "after"
    constraints: dict[str, tuple[Status, Status]] = field(default_factory=dict)
    lost_items: dict[str, list[str]] = field(default_factory=dict)
    drift: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Audit:
    constraints: list[Constraint]
    compactions: list[CompactionAudit]
    alerts: list[Alert]
    progress: AuditProgress | None = field(default=None, compare=False, repr=False)  # to go on from (run_audit's ``resume``)


def compaction_events(session: Session) -> list[CompactionEvent]:
    """Explicit markers plus implicit compactions, in message order; pre/post filled from usage where missing."""
    events = _EventScan()
    for entry in session.entries:
        events.see(entry)
    return events.events


class _EventScan:
    """``compaction_events``, fed one entry at a time (so that one pass can serve several scans)."""

    def __init__(self) -> None:
        self.events: list[CompactionEvent] = []
        self._last_usage: tuple[int, int] | None = None  # (message, prompt tokens)
        self._marked_since_last_call = False

    def copy(self) -> _EventScan:
        twin = _EventScan()
        twin.events, twin._last_usage, twin._marked_since_last_call = list(self.events), self._last_usage, self._marked_since_last_call
        return twin

    def see(self, entry: Entry) -> None:
        events, last_usage = self.events, self._last_usage
        if entry.compaction is not None:
            c = entry.compaction
            pre = c.pre_tokens if c.pre_tokens is not None else (last_usage[1] if last_usage else None)
            events.append(CompactionEvent(entry.index, c.kind, c.trigger, pre, c.post_tokens, entry.timestamp, c.opaque))
            self._marked_since_last_call = True
        if entry.usage is not None:
            prompt = entry.usage.prompt_tokens
            marked = self._marked_since_last_call
            if last_usage and not marked and prompt < last_usage[1] * (1 - IMPLICIT_DROP):
                events.append(CompactionEvent(entry.index, "implicit", None, last_usage[1], prompt, entry.timestamp))
            if events and events[-1].post_tokens is None and events[-1].message < entry.index and marked:
                e = events[-1]
                events[-1] = CompactionEvent(e.message, e.kind, e.trigger, e.pre_tokens, prompt, e.timestamp, e.opaque)
            self._last_usage = (entry.index, prompt)
            self._marked_since_last_call = False


def _after_message(entries: list[Entry], compaction_message: int) -> int:
    """The window the model sees at its first call after the compaction (summary and preserved included)."""
    for position in range(compaction_message, len(entries)):  # by position: a store unpacks only what is read
        entry = entries[position]
        if entry.role == "assistant" or entry.compaction is not None:
            return entry.index - 1
    return len(entries)


class _Reading:
    """What one pass over the entries found (compactions, tool calls, violations), resumable.

    A followed log's audit goes on from the reading of the previous one instead
    of reading the whole history again at every compaction that arrives.
    """

    def __init__(self, checks: list) -> None:
        self.position = 0  # entries read
        self.events = _EventScan()
        self.calls: list[_Call] = []
        self.violated: list[Alert] = []
        self.checks = checks

    def copy(self) -> _Reading:
        twin = _Reading(self.checks)
        twin.position, twin.calls, twin.violated, twin.events = self.position, list(self.calls), list(self.violated), self.events.copy()
        return twin

    def read(self, entries: Sequence[Entry], stop: int) -> None:
        """Go on reading up to position ``stop``."""
        checks = self.checks
        while self.position < stop:
            # A slice at a time: a packed store unpacks what is sliced, all of it at once.
            for entry in entries[self.position : min(stop, self.position + RUN_STEP)]:
                self.events.see(entry)
                for block in entry.blocks:
                    if block.category == TOOL_CALL:
                        text = block.text  # read once: a released input comes back from the log
                        self.calls.append(_call(entry.index, block.tool_name, text))
                        if checks:
                            self.violated += _violations_of(entry.index, block, text, checks)
                self.position += 1


@dataclass(slots=True)
class AuditProgress:
    """Where an audit of a session may go on from: its reading of the entries that were final then
    (``Session.final_before``), and the compactions audited wholly within them."""

    session: Session
    constraints: list[Constraint]
    reading: _Reading
    resets: int  # Session.replay_resets seen
    pairs: dict[tuple[int, int], tuple[dict[str, tuple[Status, Status]], dict[str, list[str]]]]
    afters: dict[int, int]  # compaction message → its "after" message, where that is final
    drifts: dict[tuple[int, int], dict[str, Any]]  # (compaction, next compaction) → drift, where both are final
    drift_state: tuple[Counter, set[str], int] | None = None  # the running count of calls before the first drift not final

    def valid_for(self, session: Session, constraints: list[Constraint]) -> bool:
        return (session is self.session and constraints == self.constraints
                and all(reset >= self.reading.position for reset in session.replay_resets[self.resets :]))


def run_audit(session: Session, constraints: list[Constraint], resume: AuditProgress | None = None) -> Audit:
    """Audit every compaction of ``session``. ``resume``: the progress of an earlier audit of the same
    session (``Audit.progress``), so that only what came since is read."""
    entries = session.entries
    final = session.final_before()
    if resume is not None and resume.valid_for(session, constraints):
        reading, pairs, afters, drift_done = resume.reading.copy(), dict(resume.pairs), dict(resume.afters), dict(resume.drifts)
        drift_state = resume.drift_state
    else:
        reading, pairs, afters, drift_done, drift_state = _Reading(_checks(constraints)), {}, {}, {}, None
    # One pass over the entries for the compactions, the tool calls (drift) and the violations:
    # a packed session unpacks its entries again for every pass.
    reading.read(entries, final)
    progress = AuditProgress(session, list(constraints), reading.copy(), len(session.replay_resets), pairs, afters, drift_done)
    reading.read(entries, len(entries))  # the rest, which may still change: not kept for next time
    scan, drifts, violated = reading.events, DriftScan(reading.calls), reading.violated
    if drift_state is not None:
        drifts.restore(drift_state)  # the calls before the first drift still to work out, counted
    plans = [(e, afters.get(e.message) or _after_message(entries, e.message)) for e in scan.events]
    afters.update((e.message, after) for e, after in plans if after < final)  # (read by position: unpacks)
    marked = [(e, after) for e, after in plans if e.kind != "implicit" and (e.message, after) not in pairs]
    # The windows before and after each compaction come from one replay (or, going on from an earlier
    # audit, from the checkpoints of the session's own), and only the pairs still to audit are held:
    # the texts of every window at once could outweigh the log.
    needed = {e.message - 1 for e, _ in marked} | {after for _, after in marked}
    windows = _windows_at(session, needed) if resume is not None else _windows(session, needed)
    held: dict[int, tuple[bytes, Window]] = {}
    cache = AuditCache(session.counter.store)
    alerts: list[Alert] = []
    audits = []
    seen_statuses: dict[tuple, Status] = {}

    def shared(status: Status) -> Status:
        return seen_statuses.setdefault((status.status, tuple(status.found_in), tuple(status.missing_facts)), status)

    for index, (event, after) in enumerate(plans):
        audit = CompactionAudit(event, after)
        if event.kind != "implicit":
            while after not in held and (found := next(windows, None)) is not None:
                held[found[0]] = found[1:]
        before_window, after_window = held.get(event.message - 1), held.get(after)
        if event.kind == "implicit":
            alerts.append(Alert("implicit_compaction", event.message, event.message, None,
                                f"reported context fell from {event.pre_tokens:,} to {event.post_tokens:,} tokens with no compaction marker"))
        elif (event.message, after) in pairs or (before_window is not None and after_window is not None):
            audited = [c for c in constraints if c.first_stated is None or c.first_stated < event.message]
            if (event.message, after) in pairs:
                statuses, audit.lost_items = pairs[(event.message, after)]
            else:
                statuses, audit.lost_items = _audit_pair(before_window, after_window, audited, cache)  # type: ignore[arg-type]
                if after < final:  # both windows final: never to be audited again while following
                    progress.pairs[(event.message, after)] = (statuses, audit.lost_items)
            # The same status recurs at most compactions (a rule lost long ago stays lost): hold it once.
            audit.constraints = {cid: (shared(before), shared(after)) for cid, (before, after) in statuses.items()}
            for constraint in audited:
                before, after_status = audit.constraints[constraint.id]
                if before.status == KEPT and after_status.status != KEPT:
                    missing = f"; missing {', '.join(after_status.missing_facts)}" if after_status.missing_facts else ""
                    alerts.append(Alert(f"constraint_{after_status.status}", event.message, event.message, constraint.id,
                                        f"{constraint.text!r}: kept → {after_status.status}{missing}"))
        next_message = plans[index + 1][0].message if index + 1 < len(plans) else len(entries) + 1
        known_drift = drift_done.get((event.message, next_message))
        if known_drift is not None:
            audit.drift = dict(known_drift)
        else:
            drift_final = next_message <= final
            if not drift_final and progress.drift_state is None:
                # The first drift that may still change: the next audit goes on from here.
                drifts.advance_to(event.message)
                progress.drift_state = drifts.state()
            audit.drift = drifts.between(event.message, next_message)
            if drift_final:
                drift_done[(event.message, next_message)] = dict(audit.drift)
        for (name, _key), count in audit.drift.pop("_repeats").items():
            alerts.append(Alert("drift", event.message, event.message, None, f"{name} called {count} times after the compaction with the same input"))
        audits.append(audit)
        held = {at: window for at, window in held.items() if at >= next_message - 1}  # later compactions need no earlier window
    alerts += violated
    alerts.sort(key=lambda a: (a.message, a.kind))
    return Audit(constraints, audits, alerts, progress)


def _windows(session: Session, messages: set[int]) -> Iterator[tuple[int, bytes, Window]]:
    """The window at each of ``messages``, in order, from one replay: its content key and a copy of it."""
    if not messages:
        return
    if 0 in messages:
        yield 0, window_key(Window(at=0), session.accounting), Window(at=0)
    for window in Replay(session.entries, session.accounting).run(max(messages)):
        if window.at in messages:
            # A copy of the block list (the replay goes on changing the window), not of the blocks.
            yield window.at, window_key(window, session.accounting), Window(window.at, list(window.blocks), window.last_compaction)


def _windows_at(session: Session, messages: set[int]) -> Iterator[tuple[int, bytes, Window]]:
    """As ``_windows``, each window replayed from the session's checkpoint before it: for a few
    windows late in a big session (a followed log's new compaction), not for all of them."""
    for message in sorted(messages):
        window = session.window_at(message)
        yield message, window_key(window, session.accounting), window


def _audit_pair(before: tuple[bytes, Window], after: tuple[bytes, Window], constraints: list[Constraint],
                cache: AuditCache) -> tuple[dict[str, tuple[Status, Status]], dict[str, list[str]]]:
    """Each constraint's status before → after, and the facts lost: remembered, or read from the windows' text."""
    key = pair_key(before[0], after[0], constraints)
    found = cache.get(key)
    if found is not None:
        return found
    before_text, after_text = WindowText(before[1]), WindowText(after[1])
    statuses = {c.id: (before_text.status(c), after_text.status(c)) for c in constraints}
    lost = lost_items(before_text, after_text)
    cache.put(key, statuses, lost)
    return statuses, lost


def lost_items(before: WindowText, after: WindowText) -> dict[str, list[str]]:
    """Facts in the window before a compaction that the window after no longer holds.

    A sample, not an inventory: at most MAX_LOST_ITEMS per kind, from the first
    FACT_SCAN_CHARS of each block (a multi-MB tool output is not read whole).
    Rules and decisions are looked for only where people and the agent write.
    """
    after_text = "\n".join(normalized for _, _, normalized in after.blocks)
    found: dict[str, list[str]] = {"paths": [], "identifiers": [], "numbers": [], "negative_rules": [], "decisions": []}
    for (_message, text, _), category in zip(before.blocks, before.categories):
        head = text[:FACT_SCAN_CHARS]
        # Cheap substring checks first: most tool output has no path, and a regex pass is not free.
        if "/" in head and len(found["paths"]) < MAX_CANDIDATES:
            found["paths"] += _PATH.findall(head)
        if len(found["identifiers"]) < MAX_CANDIDATES:
            found["identifiers"] += _IDENT.findall(head)
        if len(found["numbers"]) < MAX_CANDIDATES:
            found["numbers"] += [m.group(0) for m in _NUMBER_UNIT.finditer(head)]
        if category not in RULE_WRITERS or not _RULE_WORDS.search(text):
            continue  # one scan of the block rules out the sentence-by-sentence one
        for sentence in _SENTENCES.split(text):
            sentence = sentence.strip()
            if 6 <= len(sentence) <= 240:
                if _NEGATIVE.search(sentence):
                    found["negative_rules"].append(sentence)
                if _DECISION.search(sentence):
                    found["decisions"].append(sentence)
    result: dict[str, list[str]] = {}
    for kind, items in found.items():
        lost: list[str] = []
        for item in dict.fromkeys(items):
            # Each check scans the whole window after: stop at the cap rather than check every item.
            if normalize(item) not in after_text:
                lost.append(item)
                if len(lost) == MAX_LOST_ITEMS:
                    break
        result[kind] = lost
    return result


@dataclass(slots=True, frozen=True)
class _Call:
    message: int
    name: str
    key: int  # digest of the name and canonical input: the same call made twice has the same key
    read_target: str | None
    is_edit: bool


class DriftScan:
    """Calls, reads and edits after each compaction that repeat what was done before it.

    Every tool call is read once; the calls before each compaction are a running
    count, so auditing a session costs one pass however many compactions it has.
    Compactions must be asked for in message order.
    """

    def __init__(self, calls: list[_Call]) -> None:
        self.calls = calls  # every tool call, in message order (``_Reading`` collects them)
        self._before_calls: Counter = Counter()
        self._before_reads: set[str] = set()
        self._counted = 0  # calls already in the running count

    def advance_to(self, compaction: int) -> None:
        """Count the calls before message ``compaction`` into the running count."""
        calls = self.calls
        while self._counted < len(calls) and calls[self._counted].message < compaction:
            call = calls[self._counted]
            self._before_calls[call.key] += 1
            if call.read_target:
                self._before_reads.add(call.read_target)
            self._counted += 1

    def state(self) -> tuple[Counter, set[str], int]:
        """A copy of the running count, to go on from (``restore``) in a later audit."""
        return Counter(self._before_calls), set(self._before_reads), self._counted

    def restore(self, state: tuple[Counter, set[str], int]) -> None:
        before_calls, before_reads, self._counted = state
        self._before_calls, self._before_reads = Counter(before_calls), set(before_reads)

    def between(self, compaction: int, until: int) -> dict[str, Any]:
        """Drift in the messages after ``compaction`` and before ``until`` against everything before ``compaction``."""
        calls = self.calls
        self.advance_to(compaction)
        after_calls: Counter = Counter()
        names: dict[int, str] = {}
        repeated = rereads = repeated_edits = 0
        for position in range(bisect_right(calls, compaction, key=lambda c: c.message), len(calls)):
            call = calls[position]  # (not a slice of the rest: that copies every later call, at every compaction)
            if call.message >= until:
                break
            after_calls[call.key] += 1
            names[call.key] = call.name
            if call.key in self._before_calls:
                repeated += 1
                repeated_edits += call.is_edit
            if call.read_target and call.read_target in self._before_reads:
                rereads += 1
        repeats = {(names[key], key): count for key, count in after_calls.items() if count > DRIFT_REPEAT_ALERT}
        return {"repeated_calls": repeated, "rereads": rereads, "repeated_edits": repeated_edits, "_repeats": repeats}


def _call(message: int, name: str | None, text: str) -> _Call:
    # ``text`` read once: a released input comes back from the log.
    return _Call(message, name or "?", _call_key(name, text), _read_target(name, text), bool(name and _EDIT_TOOL.search(name)))


_READ_TOOL = re.compile(r"read|view|cat|open", re.IGNORECASE)
_EDIT_TOOL = re.compile(r"edit|write|patch|replace", re.IGNORECASE)


def _call_key(name: str | None, text: str) -> int:
    try:
        canonical = orjson.dumps(orjson.loads(text), option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONDecodeError, TypeError):  # not JSON, or JSON orjson cannot hold (huge integers)
        canonical = " ".join(text.split()).encode("utf-8", "surrogatepass")
    # A digest, not the input itself: a session holds tens of thousands of calls.
    digest = hashlib.blake2b(canonical, digest_size=8, key=(name or "?").encode("utf-8", "surrogatepass")[:64])
    return int.from_bytes(digest.digest(), "little")


def _read_target(name: str | None, text: str) -> str | None:
    if not name or not _READ_TOOL.search(name):
        return None
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if isinstance(data, dict):
        for key in ("file_path", "path", "filename", "file"):
            if isinstance(data.get(key), str):
                return data[key]
    return None


# --- violations ---------------------------------------------------------------------------
def implied_checks(constraint: Constraint) -> list[tuple[str, Any]]:
    """What a constraint's own words forbid, beyond its explicit ``forbid`` patterns."""
    text = constraint.text
    lowered = text.casefold()
    negated = any(word in lowered for word in NEGATIONS)
    checks: list[tuple[str, Any]] = [("pattern", re.compile(p)) for p in constraint.forbid]
    if negated and re.search(r"邮件|e-?mail", lowered):
        checks.append(("tool_name", re.compile(r"(?i)e-?mail|邮件|smtp")))
    if negated and re.search(r"手机号|电话|phone", lowered):
        checks.append(("phone", PHONE))
    cap = _CAP.search(text)
    if cap:
        checks.append(("cap", float(cap.group(1).replace(",", ""))))
    return checks


def violations(entries: Iterable[Entry], constraints: list[Constraint]) -> list[Alert]:
    alerts: list[Alert] = []
    checks = _checks(constraints)
    if not checks:
        return alerts
    for entry in entries:
        for block in entry.blocks:
            if block.category == TOOL_CALL:
                alerts += _violations_of(entry.index, block, block.text, checks)
    return alerts


def _checks(constraints: list[Constraint]) -> list[tuple[Constraint, list[tuple[str, Any]]]]:
    """The constraints a tool call can break, with what to check of it."""
    return [(c, checks) for c in constraints if (checks := implied_checks(c))]


def _violations_of(message: int, block: Block, text: str, checks: list[tuple[Constraint, list[tuple[str, Any]]]]) -> list[Alert]:
    alerts = []
    call = _Input(text)  # parsed once for every constraint, not once each
    for constraint, implied in checks:
        if constraint.first_stated is not None and message <= constraint.first_stated:
            continue
        detail = _violation(implied, block.tool_name or "", call)
        if detail:
            alerts.append(Alert("violation", message, None, constraint.id, f"{block.tool_name or 'tool call'}: {detail}"))
    return alerts


class _Input:
    """A tool call's input, with its amounts found only if a cap asks, and then once."""

    __slots__ = ("text", "_amounts")

    def __init__(self, text: str) -> None:
        self.text = text
        self._amounts: list[tuple[str, float]] | None = None

    def amounts(self) -> list[tuple[str, float]]:
        if self._amounts is None:
            self._amounts = [(key, value) for key, value in _numbers_by_key(self.text) if _AMOUNT_KEYS.search(key)]
        return self._amounts


def _violation(checks: list[tuple[str, Any]], name: str, call: _Input) -> str | None:
    text = call.text
    for kind, check in checks:
        if kind == "pattern" and (check.search(name) or check.search(text)):
            return f"matches forbidden pattern {check.pattern!r}"
        if kind == "tool_name" and check.search(name):
            return "uses a forbidden channel"
        if kind == "phone":
            match = check.search(text)
            if match:
                return f"input contains a phone number ({match.group(0)[:3]}…)"
        if kind == "cap":
            for key, value in call.amounts():
                if value > check:
                    return f"{key} {value:g} exceeds the cap {check:g}"
    return None


def _numbers_by_key(text: str) -> list[tuple[str, float]]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    found = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    found.append((str(key), float(value)))
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found
