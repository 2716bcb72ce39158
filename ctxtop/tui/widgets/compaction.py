"""The compaction view: what one compaction did, before and after side by side, over the main panes.

It draws ``Tracker.compaction_view`` (ctxtop.context.output.compaction) and
decides nothing itself. Every text is log text: built as ``rich.text.Text``,
never parsed as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from ctxtop.context.output.compaction import ADDED, FATES, KEPT_BLOCK, drift_text, no_summary_note
from ctxtop.context.output.forensics_text import forensics_headline
from ctxtop.context.output.markdown import cost_line
from ctxtop.context.output.marks import more_facts
from ctxtop.context.sanitize import clean_text, one_line
from ctxtop.tui.theme import CATEGORY_COLORS, STATUS_STYLES

VIEW_FACTS = 12  # lost facts shown per kind at most; export --compaction K lists all the audit found
FACTS_LINE_CHARS = 160  # a kind's line of them, the "(+N more)" after it aside
SUMMARY_CHARS = 4000  # the view shows the start of a long summary; export --compaction K has all of it


def _tokens(value: int | None) -> str:
    return f"{value:,}" if isinstance(value, int) else "—"


def headline(view: dict[str, Any]) -> Text:
    reported, estimated = view["reported"], view["estimated"]
    text = Text(f"Compaction {view['number']} at message {view['message']}", style="bold")
    text.append(f"  ({one_line(view['kind'], 30)}" + (f", {one_line(view['trigger'], 30)}" if view["trigger"] else "") + ")")
    text.append(f"\nreported {_tokens(reported['before'])} → {_tokens(reported['after'])} tokens", style="bold")
    text.append(f"   estimated {_tokens(estimated['before'])} → {_tokens(estimated['after'])}", style="dim")
    # (the window sent with that call; its reply, and the usage logged with it, come after)
    text.append(f"   after: the next call's window, to message {view['after_message']}", style="dim")
    return text


def before_text(view: dict[str, Any]) -> Text:
    """The window before, by category: what of it was kept, cleared, summarized or dropped."""
    text = Text("Before: what became of the window\n", style="bold")
    for name, totals in view["categories"].items():
        moved = {fate: totals[fate] for fate in FATES if fate != ADDED and totals[fate]}
        if not moved:
            continue
        text.append("■ ", style=CATEGORY_COLORS.get(name, ""))
        text.append(f"{name:<13}")
        text.append("  ".join(f"{fate} {tokens:,}" for fate, tokens in moved.items()))
        text.append("\n")
    return text


def after_text(view: dict[str, Any]) -> Text:
    """The window after: what arrived (the summary first) and the summary's text."""
    text = Text("After: what the model saw instead\n", style="bold")
    for name, totals in view["categories"].items():
        if totals[ADDED] or totals[KEPT_BLOCK]:
            text.append("■ ", style=CATEGORY_COLORS.get(name, ""))
            text.append(f"{name:<13}kept {totals[KEPT_BLOCK]:,}  new {totals[ADDED]:,}\n")
    if view["opaque"]:
        text.append("\nThe summary is encrypted: ctxtop cannot read it.\n", style="yellow")
    elif view["summary"]:
        summary = view["summary"]
        text.append("\nSummary\n", style="bold")
        text.append(clean_text(summary[:SUMMARY_CHARS]))
        if len(summary) > SUMMARY_CHARS:
            text.append(f"\n… {len(summary) - SUMMARY_CHARS:,} more characters (export --compaction {view['number']})", style="dim")
    else:
        text.append(f"\n{no_summary_note(view)}\n", style="yellow")
    return text


def _status(status: str) -> Text:
    icon, style = STATUS_STYLES.get(status, ("", ""))
    return Text(f"{icon} {status}".strip(), style=style)


def _facts_that_fit(items: list[str], room: int) -> list[str]:
    """The first lost facts (at most VIEW_FACTS) that fit whole in ``room`` characters, the first always (cut to it):
    a path cut in the middle names no file, and "+N more" counts what is not shown."""
    shown: list[str] = []
    for item in items[:VIEW_FACTS]:
        fact = one_line(item, room)
        if shown and sum(len(s) + 2 for s in shown) + len(fact) > room:
            break
        shown.append(fact)
    return shown


def rules_text(view: dict[str, Any]) -> Text:
    text = Text("Rules before → after\n", style="bold")
    if not view["rules"]:
        text.append("no rule was in force\n", style="dim")
    for rule in view["rules"]:
        text.append(f"{one_line(rule['id'], 32)}  ", style="bold")
        text.append_text(_status(rule["before"]))
        text.append(" → ")
        text.append_text(_status(rule["after"]))
        if rule["missing_facts"]:
            text.append(f"  missing {one_line(', '.join(rule['missing_facts']), 60)}", style="yellow")
        text.append(f"\n    {one_line(rule['text'] or '', 200)}\n")
    for violation in view["later_violations"]:
        text.append(f"{violation['became']} at {violation['lost_at']} → broken at {violation['broken_at']}: ", style="bold red")
        text.append(f"{one_line(violation['rule'], 32)}  {one_line(violation['detail'], 120)}\n")
    lost = {kind: items for kind, items in view["facts_lost"].items() if items}
    if lost:
        text.append("\nFacts lost\n", style="bold")
        for kind, items in lost.items():
            text.append(f"{kind.replace('_', ' ')}: ", style="dim")
            shown = _facts_that_fit(items, FACTS_LINE_CHARS - len(kind))
            text.append(", ".join(shown) + more_facts(items, len(shown)) + "\n")
    if view["drift"]:
        text.append("\nDrift after it: ", style="bold")
        text.append(drift_text(view["drift"], " "))
    forensics = view.get("forensics")
    if forensics:
        text.append("\nForensics: ", style="bold")
        text.append(one_line(forensics_headline(forensics), 200) + "\n")
        text.append(one_line(f"cost: {cost_line(forensics['cost'])}", 200) + "\n", style="dim")
    return text


class CompactionView(VerticalScroll):
    """Shown over the window list and the panes while the cursor is on a compaction the user opened."""

    DEFAULT_CSS = """
    CompactionView { display: none; height: 1fr; border: round $accent; padding: 0 1; }
    CompactionView.-visible { display: block; }
    CompactionView #compaction-sides { height: auto; }
    CompactionView #compaction-before, CompactionView #compaction-after { width: 1fr; padding: 0 1 0 0; }
    CompactionView #compaction-rules { padding: 1 0; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.view: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        # The rules first: whether this compaction lost one is what the view is opened for.
        yield Static(id="compaction-headline")
        yield Static(id="compaction-rules")
        with Horizontal(id="compaction-sides"):
            yield Static(id="compaction-before")
            yield Static(id="compaction-after")
        yield Static(Text("[ ] previous / next compaction · Esc or c closes", style="dim"))

    def show(self, view: dict[str, Any]) -> None:
        self.view = view
        self.query_one("#compaction-headline", Static).update(headline(view))
        self.query_one("#compaction-before", Static).update(before_text(view))
        self.query_one("#compaction-after", Static).update(after_text(view))
        self.query_one("#compaction-rules", Static).update(rules_text(view))
        self.add_class("-visible")
        self.scroll_home(animate=False)

    def close(self) -> None:
        self.view = None
        self.remove_class("-visible")

    @property
    def is_open(self) -> bool:
        return self.has_class("-visible")
