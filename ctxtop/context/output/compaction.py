"""What one compaction did, on one page: the moment ctxtop exists for.

The window just before the compaction beside the window the model saw at its
first call after: reported tokens before → after; each block kept, cleared,
summarized (or dropped when no summary took its place) and what arrived new;
the summary text; each rule's status before → after with its missing facts;
the facts lost; the drift that followed; and the later violations of a rule
this compaction lost or weakened ("lost at 204 → broken at 388", "weakened at 204" for one only paraphrased). The TUI's
compaction view, ``export --compaction K`` and the HTML report all show this.
"""

from __future__ import annotations

from typing import Any

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.lost import MAX_LOST_ITEMS
from ctxtop.context.audit.run import CompactionAudit
from ctxtop.context.output.markdown import forensics_lines, num, table
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.sanitize import clean_json, clean_text, markdown_cell, one_line
from ctxtop.context.window.replay import Window
from ctxtop.parsers.model import SUMMARY

KEPT_BLOCK, CLEARED, SUMMARIZED, DROPPED, ADDED = "kept", "cleared", "summarized", "dropped", "added"
FATES = (KEPT_BLOCK, CLEARED, SUMMARIZED, DROPPED, ADDED)
PREVIEW_CHARS = 160


def compaction_view(number: int, compaction: CompactionAudit, before: Window, after: Window,
                    rules: list[Constraint], violations: list[Alert]) -> dict[str, Any]:
    """The view of compaction ``number`` (1-based) from its audit, its two windows, the rules and the violations
    told as following it (``audit.blame``: of a rule it lost or weakened, not back in the window since)."""
    event = compaction.event
    summary_blocks = [item for item in after.blocks if item.category == SUMMARY and item.entry.index >= event.message]
    after_ids = {(item.entry.index, item.position): item for item in after.blocks}
    replaced = SUMMARIZED if summary_blocks else DROPPED
    blocks: list[dict[str, Any]] = []
    categories: dict[str, dict[str, int]] = {}

    def add(item, fate: str, tokens: int) -> None:
        blocks.append({"message": item.entry.index, "category": item.category, "tokens": tokens, "fate": fate,
                       "preview": one_line(item.text, PREVIEW_CHARS)})
        totals = categories.setdefault(item.category, dict.fromkeys(FATES, 0))
        totals[fate] += tokens

    # What the compaction's record carries again word for word (Codex's replacement_history: the user's
    # messages and images it keeps) is kept, not summarized away and added anew.
    carried: dict[tuple[str, int], list] = {}
    for item in after.blocks:
        if item.entry.index == event.message and item.position < 0 and item.category != SUMMARY:
            carried.setdefault((item.category, item.tokens), []).append(item)
    taken: set[int] = set()  # the record's blocks found to hold one before again: not added
    for item in before.blocks:
        kept = after_ids.get((item.entry.index, item.position))
        again = _carried_again(item, carried) if kept is None else None
        if again is not None:
            taken.add(id(again))
            add(item, KEPT_BLOCK, item.tokens)  # (listed where it was: the message it was written in)
        elif kept is None:
            add(item, replaced, item.tokens)
        elif kept.cleared and not item.cleared:
            # What was cleared, then the placeholder the model saw instead: it costs tokens of the window after.
            add(item, CLEARED, item.tokens)
            if kept.tokens:  # (an image cleared with its result has no placeholder of its own)
                add(kept, ADDED, kept.tokens)
        else:
            add(kept, KEPT_BLOCK, kept.tokens)
    known = {(item.entry.index, item.position) for item in before.blocks}
    for item in after.blocks:
        if (item.entry.index, item.position) not in known and id(item) not in taken:
            add(item, ADDED, item.tokens)
    by_id = {rule.id: rule for rule in rules}
    return {
        "number": number,
        "message": event.message,
        "after_message": compaction.after_message,
        "kind": event.kind,
        "trigger": event.trigger,
        "timestamp": event.timestamp,
        "reported": {"before": event.pre_tokens, "after": event.post_tokens},
        "estimated": {"before": before.estimated_tokens, "after": after.estimated_tokens},
        "categories": categories,
        "blocks": blocks,
        "summary": None if event.opaque else clean_text("\n\n".join(item.text for item in summary_blocks)) or None,
        "opaque": event.opaque,
        "rules": [
            {"id": cid, "text": by_id[cid].text if cid in by_id else None, "before": was.status, "after": now.status,
             "missing_facts": now.missing_facts}
            for cid, (was, now) in compaction.constraints.items()
        ],
        "facts_lost": compaction.lost_items,
        "drift": {k: v for k, v in compaction.drift.items() if not k.startswith("_")},
        "forensics": clean_json(compaction.forensics),  # (the snapshot's schema; it quotes the log)
        "later_violations": [
            {"rule": alert.constraint, "lost_at": event.message, "became": AlertKind.became(compaction.constraints[alert.constraint][1].status),
             "broken_at": alert.message, "detail": alert.detail}
            for alert in violations if alert.constraint in compaction.constraints
        ],
    }


def _carried_again(item, carried: dict[tuple[str, int], list]):
    """The block of the compaction's record that holds ``item`` again, taken from ``carried``; None if none does
    (the same category and tokens first, then the same text: a window's texts are read only for those)."""
    same = carried.get((item.category, item.tokens))
    if not same:
        return None
    for index, candidate in enumerate(same):
        if candidate.text == item.text:
            return same.pop(index)
    return None


def no_summary_note(view: dict[str, Any]) -> str:
    """What the view says in place of a summary it has none of: what the compaction did instead."""
    totals = view["categories"].values()
    if any(t[DROPPED] for t in totals):
        return "No summary: the history was cut, not summarized."
    if any(t[CLEARED] for t in totals):
        # (a microcompact: nothing was cut, old tool results became a placeholder)
        return "No summary: tool results were cleared to a placeholder; nothing was cut."
    return "No summary."


# The drift counts as the views name them: each compares the calls after the compaction with those before it
# (the drift alert is another measure: one call made more than DRIFT_REPEAT_ALERT times after it).
DRIFT_LABELS = {"repeated_calls": "calls made again from before it", "rereads": "files read again",
                "repeated_edits": "edits applied again"}


def drift_text(drift: dict[str, Any], separator: str = ": ") -> str:
    """The compaction's drift counts, named as the views name them."""
    return ", ".join(f"{DRIFT_LABELS.get(key, key.replace('_', ' '))}{separator}{value}" for key, value in drift.items())


def render_compaction_markdown(view: dict[str, Any]) -> str:
    """The compaction view as Markdown (``export --format md --compaction K``)."""
    reported, estimated = view["reported"], view["estimated"]
    lines = [
        f"## Compaction {view['number']} at message {view['message']} ({view['kind']}"
        + (f", {markdown_cell(view['trigger'])}" if view["trigger"] else "") + ")",
        "",
        f"- **Reported:** {num(reported['before'])} → {num(reported['after'])} tokens"
        f" · **estimated:** {num(estimated['before'])} → {num(estimated['after'])}",
        f"- **After window:** the window sent with the model's first call after it, up to message {view['after_message']}",
        "",
        "### Rules before → after",
        "",
    ]
    lines += table(["rule", "before", "after", "missing facts", "text"],
                   [[r["id"], r["before"], r["after"], ", ".join(r["missing_facts"]) or "—", r["text"] or "—"] for r in view["rules"]]) \
        if view["rules"] else ["_No rule was in force._"]
    if view["later_violations"]:
        lines += ["", "### Broken later", ""]
        lines += table(["rule", "here it was", "broken at", "detail"],
                       [[v["rule"], f"{v['became']} at {v['lost_at']}", v["broken_at"], v["detail"]] for v in view["later_violations"]])
    lines += ["", "### What happened to the window", ""]
    lines += table(["category", *FATES], [[name, *(num(t[f]) for f in FATES)] for name, t in view["categories"].items()])
    lost = {kind: items for kind, items in view["facts_lost"].items() if items}
    if lost:
        lines += ["", "### Facts lost", ""]
        lines += [f"- **{kind}:** " + ", ".join(markdown_cell(one_line(item, 80)) for item in items) for kind, items in lost.items()]
        if any(len(items) >= MAX_LOST_ITEMS for items in lost.values()):
            lines += ["", f"_A sample: at most {MAX_LOST_ITEMS} of each kind are listed._"]
    if view["drift"]:
        lines += ["", "### Drift after it", "", drift_text(view["drift"])]
    if view["forensics"]:
        lines += ["", "### Forensics", "", *forensics_lines(view["message"], view["forensics"])[:-1]]
    lines += ["", "### Summary", ""]
    if view["opaque"]:
        lines.append("_Encrypted: the summary cannot be read._")
    elif view["summary"]:
        lines += ["> " + markdown_cell(line) for line in view["summary"].splitlines()]
    else:
        lines.append(f"_{no_summary_note(view)}_")
    return "\n".join(lines) + "\n"
