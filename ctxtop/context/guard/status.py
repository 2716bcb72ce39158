"""The status line: window used, compactions so far, and the rules' state, in one short line."""

from __future__ import annotations

from collections import Counter

from ctxtop.context.guard.transcript import Known
from ctxtop.context.output.sanitize import one_line
from ctxtop.context.rules.constraints import KEPT, LOST, Constraint, WindowText
from ctxtop.context.window.session import Session

MAX_NAMED = 2  # rule ids named in the line; more are counted


def status_line(known: Known, rules: list[Constraint], session: Session, window: WindowText | None) -> str:
    """``ctx 122k/200k 61% · 2 compactions · rules 3 ✔`` (or ``rules: 1 lost (wecom-only)``).

    ``session``: the transcript from its last compaction on; ``window``: the text of its latest window
    (None when no rule is in force). The tokens are those the log reports for the latest call.
    """
    limit, _source = session.limit()
    reported = session.reported_at(None)
    parts = [f"ctx {_short(reported)}/{_short(limit)} {100 * reported / limit:.0f}%" if reported is not None and limit
             else f"ctx ?/{_short(limit)} (no usage reported yet)"]
    parts.append(f"{known.compactions} compaction{'s' if known.compactions != 1 else ''}")
    parts.append(_rules_state(rules, window))
    return one_line(" · ".join(parts), 200)


def _rules_state(rules: list[Constraint], window: WindowText | None) -> str:
    if not rules or window is None:
        return "no rules"
    statuses = {rule.id: window.status(rule).status for rule in rules}
    failing = {rule_id: status for rule_id, status in statuses.items() if status != KEPT}
    if not failing:
        return f"rules {len(rules)} ✔"
    counts = Counter(failing.values())
    words = []
    for status in (LOST, "paraphrased", "unverifiable"):
        if counts[status]:
            names = [rule_id for rule_id, s in failing.items() if s == status]
            named = ", ".join(names[:MAX_NAMED]) + (f", +{len(names) - MAX_NAMED}" if len(names) > MAX_NAMED else "")
            words.append(f"{counts[status]} {'weakened' if status == 'paraphrased' else status} ({named})")
    return "rules: " + "; ".join(words)


def _short(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 10_000:
        return f"{tokens / 1000:.0f}k"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)
