"""The status line: window used, compactions so far, and the rules' state, in one short line.

It runs after every message, so what it found is remembered (in ctxtop's cache
directory) with how far the transcript was read: a later call reads only the
lines appended since. Until the next compaction the window only grows, so a
rule kept stays kept and one lost is found again only if new text restates it;
a compaction (any, a micro-compaction too) among the new lines means the window
after it is read again from the transcript's tail.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ctxtop.context.guard.payload import Payload
from ctxtop.context.guard.rules import GuardOptions, rules_in_force
from ctxtop.context.guard.transcript import Known, current_session, digest_before, known_path, known_transcript, read_appended, write_json
from ctxtop.context.rules.constraints import KEPT, LOST, PARAPHRASED, Constraint, WindowText
from ctxtop.context.sanitize import one_line
from ctxtop.context.store.source import SourceError
from ctxtop.context.window.limits import window_limit
from ctxtop.context.window.replay import Window, WindowBlock
from ctxtop.parsers.model import Entry

MAX_NAMED = 2  # rule ids named in the line; more are counted
MEMO_VERSION = 3  # 2: a restatement keeps a rule's negation only in a sentence that names the rule's terms; 3: 别 alone
_RANK = {KEPT: 0, PARAPHRASED: 1}  # lower is better; anything else (lost, unverifiable) ranks after


@dataclass(slots=True)
class WindowState:
    """What the line says of the window: the tokens the log reports for the latest call, the limit, and
    each rule's status (by id)."""

    reported: int | None
    limit: int
    statuses: dict[str, str]


def window_state(known: Known, rules: list[Constraint]) -> WindowState:
    """Read from the transcript's tail: the window as the model sees it now."""
    session = current_session(known.path, known)
    window = WindowText(session.window_at(None)) if rules else None
    statuses = {rule.id: window.status(rule).status for rule in rules} if window is not None else {}
    return WindowState(session.reported_at(None), session.limit()[0], statuses)


def advanced(state: WindowState, entries: Sequence[Entry], rules: list[Constraint]) -> WindowState:
    """``state`` after ``entries`` were appended (none of them a compaction): a rule not kept may be restated."""
    reported = next((e.usage.prompt_tokens for e in reversed(entries) if e.usage is not None), state.reported)
    statuses = dict(state.statuses)
    pending = [rule for rule in rules if statuses.get(rule.id) != KEPT]
    if pending and entries:
        new_text = WindowText(Window(entries[-1].index, [WindowBlock(e, i, b, 0) for e in entries for i, b in enumerate(e.blocks)]))
        for rule in pending:
            found = new_text.status(rule).status
            if rule.id not in statuses or _RANK.get(found, 2) < _RANK.get(statuses[rule.id], 2):
                statuses[rule.id] = found
    return WindowState(reported, state.limit, statuses)


def status(payload: Payload, options: GuardOptions = GuardOptions()) -> str:
    """The status line for the transcript the payload names (``ctxtop statusline``).

    Raises what ``Session.open`` raises for a transcript that cannot be read.
    """
    if not payload.transcript_path:
        raise SourceError("the status line's input names no transcript")
    known = known_transcript(payload.transcript_path)
    rules, _notes = rules_in_force(known, payload.cwd, options, payload.transcript_path, payload.session_id)
    return status_line(known, rules, reading=known.behind > 0, limit=payload_limit(payload))


def payload_limit(payload: Payload) -> int | None:
    """The window's size as the agent says it runs the model now, over what its log implies: the size it gives, else
    its model's (``claude-opus-4-6[1m]``: a 1M window the log's ``claude-opus-4-6`` does not tell)."""
    if payload.context_window is not None:
        return payload.context_window
    limit, source = window_limit(payload.model)
    return limit if source == "model" else None


def status_line(known: Known, rules: list[Constraint], *, reading: bool = False, limit: int | None = None) -> str:
    """``ctx 122k/200k 61% · 2 compactions · rules 3 ✔`` (or ``rules: 1 lost (wecom-only)``), for the
    transcript as it is now. The tokens are those the log reports for the latest call. ``reading``: the
    transcript is not read to its end yet (a big one, read over several calls): counts are "at least". ``limit``: the
    window's size, instead of what the log implies."""
    key = [[rule.id, rule.text] for rule in rules]
    memo_path = known_path(known.path, "status")
    state = None
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
        if (memo.get("version") == MEMO_VERSION and memo.get("rules") == key and memo.get("compactions") == known.compactions
                and memo.get("check") == digest_before(known.path, memo["offset"])):
            offset = int(memo["offset"])
            state = WindowState(memo["reported"], int(memo["limit"]), dict(memo["statuses"]))
            if offset != known.offset:
                appended = read_appended(known.path, known.format, offset)
                if appended is None or any(e.compaction is not None for e in appended[0]):
                    state = None
                else:
                    state = advanced(state, appended[0], rules)
                    offset = appended[1]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        state = None
    if state is None:
        state, offset = window_state(known, rules), known.offset
    write_json(memo_path, {"version": MEMO_VERSION, "rules": key, "compactions": known.compactions, "offset": offset,
                           "check": digest_before(known.path, offset), "reported": state.reported, "limit": state.limit,
                           "statuses": state.statuses})
    if limit is not None:
        state.limit = limit
    return render(state, known.compactions, rules, reading)


def render(state: WindowState, compactions: int, rules: list[Constraint], reading: bool = False) -> str:
    limit, reported = state.limit, state.reported
    parts = [f"ctx {short_tokens(reported)}/{short_tokens(limit)} {100 * reported / limit:.0f}%" if reported is not None and limit
             else f"ctx ?/{short_tokens(limit)} (no usage reported yet)"]
    parts.append(f"{compactions}{'+' if reading else ''} compaction{'s' if compactions != 1 or reading else ''}")
    parts.append(_rules_state(rules, state.statuses))
    return one_line(" · ".join(parts), 200)


def _rules_state(rules: list[Constraint], statuses: dict[str, str]) -> str:
    if not rules:
        return "no rules"
    failing = {rule.id: statuses.get(rule.id, LOST) for rule in rules if statuses.get(rule.id) != KEPT}
    if not failing:
        return f"rules {len(rules)} ✔"
    counts = Counter(failing.values())
    words = []
    for status in (LOST, PARAPHRASED, "unverifiable"):
        if counts[status]:
            names = [rule_id for rule_id, s in failing.items() if s == status]
            named = ", ".join(names[:MAX_NAMED]) + (f", +{len(names) - MAX_NAMED}" if len(names) > MAX_NAMED else "")
            words.append(f"{counts[status]} {'weakened' if status == PARAPHRASED else status} ({named})")
    return "rules: " + "; ".join(words)


def short_tokens(tokens: int) -> str:
    """``tokens`` in at most four characters and a unit. Each unit starts where the one below would round up to
    its next (999,500 is "1.0M", not "1000k"; 9,960 is "10k", not "10.0k")."""
    if tokens >= 999_500:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 9_950:
        return f"{tokens / 1000:.0f}k"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)
