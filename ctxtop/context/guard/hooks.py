"""Each hook event's answer, decided headless; ``tui.commands.hook`` only reads stdin and prints it.

- ``PreToolUse``: deny (or, with ``ask``, put to the user) a call that breaks a rule in force.
- ``SessionStart`` with ``source: compact``: re-inject the rules the compaction lost, and the facts.
- ``PreCompact``: record the window's rules and facts for the SessionStart after; never blocks.
- ``PostCompact`` (Codex, which cannot take context back in): say what was lost, and with
  ``stop_on_loss`` stop the agent (``continue: false``) so the user can restate it.

A transcript that cannot be read leaves the rules of the pins files: the answer
still comes, with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxtop.context.audit.lost import fact_candidates
from ctxtop.context.guard.judge import denial_reason, judge_call, unchecked_reason
from ctxtop.context.guard.payload import Payload
from ctxtop.context.guard.record import load_record, record_window
from ctxtop.context.guard.reinject import Reinjection, reinjection
from ctxtop.context.guard.rules import GuardOptions, rules_in_force
from ctxtop.context.guard.transcript import UNREADABLE, Known, current_session, known_transcript, window_before_last_compaction
from ctxtop.context.rules.constraints import KEPT, Constraint, WindowText
from ctxtop.context.rules.facts import normalize
from ctxtop.context.sanitize import clean_json, one_line


@dataclass(slots=True)
class Answer:
    output: dict[str, Any] | None = None  # the JSON to print on stdout (None: print nothing)
    notes: list[str] = field(default_factory=list)  # one-line notes for stderr


def answer(payload: Payload, options: GuardOptions = GuardOptions()) -> Answer:
    handler = _HANDLERS.get(payload.event)
    if handler is None:
        return Answer(notes=[f"ctxtop answers PreToolUse, SessionStart (compact), PreCompact and PostCompact, not {one_line(payload.event, 40)!r}"])
    result = handler(payload, options)
    if result.output is not None:
        result.output = clean_json(result.output)  # type: ignore[assignment]  # no control sequence reaches a terminal
    return result


def _known(payload: Payload, notes: list[str]) -> Known | None:
    if not payload.transcript_path:
        notes.append("the payload names no transcript: only the pins files' rules apply")
        return None
    try:
        known = known_transcript(payload.transcript_path)
    except UNREADABLE as exc:
        notes.append(f"transcript not read ({one_line(str(exc), 200)}): only the pins files' rules apply")
        return None
    if known.behind:
        notes.append(f"transcript read to {known.offset / (known.offset + known.behind):.0%} so far (a big one is read over "
                     f"several calls): rules stated after that are not known yet")
    return known


def _rules(payload: Payload, options: GuardOptions, known: Known | None, notes: list[str]) -> list[Constraint]:
    rules, more = rules_in_force(known, payload.cwd, options, payload.transcript_path if known is not None else None, payload.session_id)
    notes += more
    return rules


def _pre_tool_use(payload: Payload, options: GuardOptions) -> Answer:
    notes: list[str] = []
    rules = _rules(payload, options, _known(payload, notes), notes)
    verdict = judge_call(payload.tool_name, payload.tool_input, rules)
    notes += [f"not checked against [{one_line(u.rule.id, 60)}]: {one_line(u.detail, 200)}" for u in verdict.unchecked]
    if verdict.breaches:
        decision, reason = ("ask", denial_reason(verdict.breaches, asking=True)) if options.ask else ("deny", denial_reason(verdict.breaches))
    elif verdict.unchecked:  # put to the user: an input that times a pattern out must not get through unseen
        decision, reason = "ask", unchecked_reason(verdict.unchecked)
    else:
        return Answer(None, notes)
    return Answer({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
                                          "permissionDecisionReason": reason}}, notes)


@dataclass(slots=True)
class _LastCompaction:
    known: Known
    record: dict[str, Any] | None  # the PreCompact record taken before it, if any
    lost: Reinjection  # what the window after it does not hold


def _last_compaction(payload: Payload, options: GuardOptions, notes: list[str]) -> _LastCompaction | None:
    """What the transcript's last compaction lost (None when the transcript cannot be read)."""
    known = _known(payload, notes)
    if known is None:
        return None
    rules = _rules(payload, options, known, notes)  # (the record's rules among them: rules_in_force adds them)
    after = WindowText(current_session(known.path, known).window_at(None))
    record = load_record(known, payload.session_id)
    return _LastCompaction(known, record, reinjection(rules, after, _facts_before_last_compaction(known) if record is None else record["facts"]))


def _held_before(compaction: _LastCompaction, rules: list[Constraint]) -> list[Constraint]:
    """Those of ``rules`` the window held verbatim just before the compaction: by its record, else read from the
    transcript (all of them when neither tells)."""
    if compaction.record is not None:
        held = {normalize(r["text"]) for r in compaction.record["rules"] if r["status"] == KEPT}
        return [rule for rule in rules if rule.normalized in held]
    before = window_before_last_compaction(compaction.known) if compaction.known.compactions else None
    if before is None:
        return rules
    window = WindowText(before)
    return [rule for rule in rules if window.status(rule).status == KEPT]


def _facts_before_last_compaction(known: Known) -> dict[str, list[str]] | None:
    """No PreCompact record: the facts of the window before the last compaction, read from the transcript."""
    if not known.compactions:
        return None
    before = window_before_last_compaction(known)
    return fact_candidates(WindowText(before)) if before is not None else None


def _session_start(payload: Payload, options: GuardOptions) -> Answer:
    if payload.source != "compact":
        return Answer()  # only the start after a compaction has anything to put back
    notes: list[str] = []
    compaction = _last_compaction(payload, options, notes)
    if compaction is None or compaction.lost.empty:
        return Answer(None, notes)
    left_out = len(compaction.lost.rules) - compaction.lost.rules_shown()
    if left_out:
        notes.append(f"{left_out} of the {len(compaction.lost.rules)} rules lost are named, not put back word for word: all of "
                     f"them would be too long for the agent's added context")
    return Answer({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": compaction.lost.text()}}, notes)


def _pre_compact(payload: Payload, options: GuardOptions) -> Answer:
    notes: list[str] = []
    known = _known(payload, notes)
    if known is not None:
        rules = _rules(payload, options, known, notes)
        if record_window(known, payload.session_id, rules, WindowText(current_session(known.path, known).window_at(None))) is None:
            notes.append("the window could not be recorded (ctxtop's cache directory is not writable): after the compaction, "
                         "only what the transcript still holds is compared")
    return Answer(None, notes)  # never blocks: an automatic compaction that fails fails the request


def _post_compact(payload: Payload, options: GuardOptions) -> Answer:
    notes: list[str] = []
    compaction = _last_compaction(payload, options, notes)
    # Only what the compaction lost: not a rule the window did not hold before it either (a pins-file rule never stated).
    lost = _held_before(compaction, [rule for rule, _status in compaction.lost.rules]) if compaction is not None else []
    if not lost:
        return Answer(None, notes)
    names = ", ".join(rule.id for rule in lost)
    notes.append(f"the compaction lost or weakened {len(lost)} rule(s): {one_line(names, 200)}")
    if not options.stop_on_loss:
        return Answer(None, notes)
    return Answer({"continue": False, "stopReason": f"ctxtop: the compaction lost or weakened {len(lost)} rule(s); "
                                                    f"restate them before going on:\n" + "\n".join(f"- {rule.text}" for rule in lost)}, notes)


_HANDLERS = {"PreToolUse": _pre_tool_use, "SessionStart": _session_start, "PreCompact": _pre_compact, "PostCompact": _post_compact}
