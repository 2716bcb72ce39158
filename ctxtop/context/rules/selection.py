"""Which rules are in force, and where each came from: the one place that decides it.

Rules come from the command line (``--pin``), a pins file (``--pins``), the pins
a user made in the TUI (saved per session), and auto-detection. Pins add to the
auto-detected rules when ``--auto`` asks or when no pin came from the command
line or a pins file; pins made in the TUI never switch auto-detection off. An
auto-detected rule the user unpinned is hidden for that session.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxtop.context.rules.constraints import Constraint, detect_constraints, locate, make_constraint, rule_key, unique_ids
from ctxtop.context.rules.pins import PinsError, load_pins
from ctxtop.parsers.model import Entry

# Where a rule in force came from (``Constraint.source``).
FROM_PIN, FROM_PINS_FILE, FROM_SAVED, FROM_AUTO = "pin", "pins-file", "saved", "auto"


@dataclass(frozen=True, slots=True)
class RuleRequest:
    """What the user asked to track: pins on the command line, a pins file, and whether to also auto-detect."""

    pins: tuple[str, ...] = ()
    pins_file: str | None = None
    auto: bool = False
    more_pins_files: tuple[str, ...] = ()  # further pins files (a project's .ctxtop/pins.toml, for the hooks)

    @property
    def auto_detects(self) -> bool:
        """Auto-detection is on when asked for, or when the command line and pins file pin nothing."""
        files = (self.pins_file, *self.more_pins_files)
        return self.auto or not (any(p.strip() for p in self.pins) or any(_pins_something(f) for f in files if f))


def _pins_something(path: str) -> bool:
    """Whether the pins file at ``path`` holds a pin: an empty one (or one of comments only) pins nothing, and leaves
    auto-detection on. One that cannot be used counts as pinning (``select_rules`` says why it cannot). Read again
    only when the file changed: a followed log asks at every update."""
    try:
        info = os.stat(path)
    except OSError:
        return True  # (missing or unreadable: cannot be used)
    return _holds_pins(path, info.st_ino, info.st_mtime_ns, info.st_size)


@functools.lru_cache(maxsize=16)
def _holds_pins(path: str, _inode: int, _modified: int, _size: int) -> bool:
    try:
        return bool(load_pins(path))
    except PinsError:
        return True


def select_rules(entries: Sequence[Entry], request: RuleRequest, saved: Sequence[str] = (),
                 hidden: frozenset[str] = frozenset(), log_format: str | None = None,
                 detected: Sequence[Constraint] | None = None,
                 detect: Callable[[], list[Constraint]] | None = None) -> list[Constraint]:
    """The rules in force for ``entries``; each knows its source and where the session first states it.
    ``detect``: what auto-detection finds in ``entries`` (``rules.remembered``), when it may be remembered.

    ``detected``: the session's auto-detected rules when already known (the hooks keep them between
    calls), instead of detecting them in ``entries``. Raises PinsError for a pins file that cannot be used.
    """
    chosen = [make_constraint(t, FROM_PIN) for t in request.pins if t.strip()]
    for pins_file in (request.pins_file, *request.more_pins_files):
        if pins_file:
            chosen += [_with_source(c, FROM_PINS_FILE) for c in load_pins(pins_file)]
    known = {c.normalized for c in chosen}
    for text in saved:
        pin = make_constraint(text, FROM_SAVED)
        if text.strip() and pin.normalized not in known:
            chosen.append(pin)
            known.add(pin.normalized)
    if request.auto_detects:
        if detected is not None:
            found = list(detected)
        else:
            found = detect() if detect is not None else detect_constraints(entries, log_format)
        chosen += [c for c in found if c.normalized not in known]
    locate(chosen, entries)
    rules = unique_ids(chosen)
    return [r for r in rules if not (r.source == FROM_AUTO and r.id in hidden)]


def newly_stated(entries: Sequence[Entry], start: int, rules: Sequence[Constraint],
                 hidden: frozenset[str] = frozenset(), log_format: str | None = None) -> list[Constraint]:
    """Auto-detected rules first stated in ``entries[start:]`` that are not among ``rules`` yet (a live log)."""
    known = {rule_key(r.text) for r in rules}
    used = {r.id for r in rules}
    fresh = []
    for rule in unique_ids(detect_constraints(entries[start:], log_format)):
        if rule_key(rule.text) in known:
            continue
        base, count = rule.id, 1
        while rule.id in used:
            count += 1
            rule.id = f"{base}-{count}"
        used.add(rule.id)
        if rule.id not in hidden:
            fresh.append(rule)
    return fresh


def _with_source(constraint: Constraint, source: str) -> Constraint:
    constraint.source = source
    return constraint
