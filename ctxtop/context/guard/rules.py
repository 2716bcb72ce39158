"""The rules in force for a hook, decided by ``select_rules`` as for every front end.

The session's saved pins (made in the TUI), a project pins file
(``.ctxtop/pins.toml`` in the hook's ``cwd`` or a folder above it), ``--pins
FILE``, and the transcript's auto-detected rules (unless ``--no-auto``), kept
between calls by ``transcript``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxtop.context.guard.record import load_record, recorded_rules
from ctxtop.context.guard.transcript import Known
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.rules.pin_store import load_session_pins
from ctxtop.context.rules.selection import RuleRequest, select_rules

PROJECT_PINS = Path(".ctxtop") / "pins.toml"


@dataclass(frozen=True, slots=True)
class GuardOptions:
    pins_file: str | None = None  # --pins FILE
    auto: bool = True  # the transcript's auto-detected rules (--no-auto: off)
    ask: bool = False  # --ask: a call that breaks a rule is put to the user instead of denied
    stop_on_loss: bool = False  # --stop-on-loss: PostCompact (Codex) stops the agent when rules were lost


def project_pins(cwd: str | None) -> Path | None:
    """The project's pins file: ``.ctxtop/pins.toml`` in ``cwd`` or the nearest folder above it that has one."""
    if not cwd:
        return None
    folder = Path(cwd)
    for candidate in (folder, *folder.parents):
        path = candidate / PROJECT_PINS
        try:
            if path.is_file():
                return path
        except OSError:  # a name too long for the file system, say: no pins file there
            continue
    return None


def rules_in_force(known: Known | None, cwd: str | None, options: GuardOptions, transcript: str | None = None,
                   session_id: str = "") -> tuple[list[Constraint], list[str]]:
    """The rules in force, and one-line notes about what could not be used (a saved pins file unread…). A rule the
    window held before the transcript's last compaction (its PreCompact record) stays in force though the transcript
    no longer states it (rewritten): ctxtop put it back, and it still applies.

    Raises PinsError for an unusable ``--pins`` or project pins file.
    """
    notes: list[str] = []
    saved_texts: list[str] = []
    hidden: frozenset[str] = frozenset()
    if transcript:
        saved, warning = load_session_pins(transcript)
        saved_texts, hidden = saved.texts, frozenset(saved.hidden)
        if warning:
            notes.append(warning)
    project = project_pins(cwd)
    request = RuleRequest(pins_file=options.pins_file, auto=options.auto,
                          more_pins_files=(str(project),) if project is not None else ())
    detected = [_copy(r) for r in known.rules] if (known is not None and options.auto) else []
    rules = select_rules([], request, saved_texts, hidden, known.format if known else None, detected=detected)
    record = load_record(known, session_id) if known is not None else None
    if record is None:
        return rules, notes
    # (A rule hidden in the TUI since is not brought back by the record: the user took it out.)
    return rules + [rule for rule in recorded_rules(record, rules) if rule.id not in hidden], notes


def _copy(rule: Constraint) -> Constraint:
    """A rule to hand to ``select_rules`` (which may rename it to keep ids unique): not the known one."""
    return Constraint(rule.id, rule.text, rule.source, list(rule.facts), list(rule.forbid), rule.first_stated, rule.cue, rule.origin)
