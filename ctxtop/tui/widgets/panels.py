"""The side panels: constraints, strategy previews and alerts, each a keyed table updated in place."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from ctxtop.context.audit.alerts import Alert
from ctxtop.context.output.redact import redact_text_if
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.sanitize import one_line
from ctxtop.context.strategies.preview import Preview
from ctxtop.tui.theme import STATUS_STYLES
from ctxtop.tui.widgets.cells import count_cell
from ctxtop.tui.widgets.empty_note import show_if_empty


def status_text(status: str) -> Text:
    icon, style = STATUS_STYLES.get(status, ("·", "dim"))
    return Text(f"{icon} {status}", style=style)


def rule_text(constraint: Constraint, redacting: bool = False, row: dict[str, Any] | None = None, width: int = 200) -> Text:
    """The rule's id, then its text; what a summary lost (yellow), where it is, and why it was taken (dim).

    Built from plain strings, never markup: a rule's text comes from the log.
    """
    text = one_line(constraint.text, width)
    # (Its id too: a pins file's is taken as written.)
    line = Text(("📌 " if constraint.source == "pin" else "") + one_line(constraint.id), style="bold")
    line.append("  " + redact_text_if(text, redacting))
    if row is not None:
        if row["missing_facts"]:
            # (A fact is the rule's own words: a phone number, a key, masked as the rule's text is.)
            missing = ", ".join(row["missing_facts"])
            line.append("  missing: " + one_line(redact_text_if(missing, redacting), 40), style="yellow")
        where = ", ".join(str(m) for m in row["found_in"][:3])
        line.append(f"  in {where}" if where else "  in —", style="dim")
    why = " · ".join(part for part in (f"cue: {constraint.cue}" if constraint.cue else "", constraint.origin) if part)
    if why:
        line.append(f"  ({one_line(why, 60)})", style="dim")
    return line


class ConstraintsTable(DataTable):
    """Each constraint's status in the window at the cursor, then its id and text side by side, the facts a
    summary lost and where it lives — one wide column, so a narrow pane still shows the id with its text."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_column("status", key="status", width=14)
        self.add_column("rule", key="rule")
        self._constraints: dict[str, Constraint] = {}
        self._redacting = False

    def set_constraints(self, constraints: list[Constraint], redacting: bool = False) -> None:
        self.clear()
        self._constraints = {c.id: c for c in constraints}
        self._redacting = redacting
        for c in constraints:
            self.add_row(status_text("…"), rule_text(c, redacting), key=c.id)
        show_if_empty(self)

    def show(self, rows: list[dict[str, Any]]) -> None:
        with self.app.batch_update():
            for row in rows:
                constraint = self._constraints.get(row["id"])
                if constraint is None or row["id"] not in self.rows:
                    continue
                self.update_cell(row["id"], "status", status_text(row["status"]))
                self.update_cell(row["id"], "rule", rule_text(constraint, self._redacting, row))


class StrategiesTable(DataTable):
    """The preview of every strategy at the cursor; the highlighted row marks the window list."""

    class Chosen(Message):
        def __init__(self, strategy: str | None) -> None:
            super().__init__()
            self.strategy = strategy

    NONE = "(none)"
    AFTER_WIDTH = 13
    CACHE_WIDTH = 14

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_column("strategy", key="strategy", width=20)
        self.add_column("fires", key="fires", width=5)
        self.add_column(Text("after", justify="right"), key="after", width=self.AFTER_WIDTH)
        self.add_column("kept/risk/lost", key="outcome", width=14)
        self.add_column(Text("cache re-write", justify="right"), key="cache", width=self.CACHE_WIDTH)
        self.add_column("note", key="note")

    def set_strategies(self, names: list[str]) -> None:
        self.clear()
        self.add_row(Text(self.NONE, style="dim"), Text(""), Text(""), Text(""), Text(""), Text("no strategy marked"), key=self.NONE)
        for name in names:
            self.add_row(Text(name), Text(""), Text(""), Text(""), Text(""), Text(""), key=name)

    def show(self, previews: list[Preview]) -> None:
        with self.app.batch_update():
            for p in previews:
                if p.strategy not in self.rows:
                    continue
                fires = {True: Text("yes", style="bold red"), False: Text("no", style="dim"), None: Text("ask", style="dim")}
                self.update_cell(p.strategy, "fires", fires[p.trigger.fires])
                share = f" {100 * p.tokens_after / p.tokens_before:3.0f}%" if p.tokens_before else ""
                after = count_cell(p.tokens_after, self.AFTER_WIDTH - len(share))
                self.update_cell(p.strategy, "after", after.append(share))
                counts = p.outcome_counts()
                style = "bold red" if counts["lost"] else "yellow" if counts["at_risk"] else "green"
                outcome = f"{counts['kept']}/{counts['at_risk']}/{counts['lost']}" if p.constraints else "—"
                self.update_cell(p.strategy, "outcome", Text(outcome, style=style))
                self.update_cell(p.strategy, "cache", count_cell(p.cache_rewrite_tokens, self.CACHE_WIDTH))
                # Its trigger first, as `ctxtop preview` shows it: "no" beside a smaller window reads as a contradiction
                # without "input tokens > 100,000" (what it does is shown all the same: the window if it fired).
                trigger = f"when {p.trigger.rule}" if p.trigger.fires is not None else ""
                note = "; ".join(part for part in (trigger, p.reason or "; ".join(p.notes)) if part)
                self.update_cell(p.strategy, "note", Text(one_line(note, 160), style="dim"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        self.post_message(self.Chosen(None if key == self.NONE else key))


class AlertsTable(DataTable):
    """Every alert so far; Enter jumps to its compaction (or the message of a violation)."""

    class Jump(Message):
        def __init__(self, message: int) -> None:
            super().__init__()
            self.message = message

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self._add_columns(message_width=5)
        self._alerts: list[Alert] = []
        self._redacting = False

    def _add_columns(self, message_width: int) -> None:
        self.add_column("msg", key="message", width=message_width)
        self.add_column("kind", key="kind", width=22)
        self.add_column("constraint", key="constraint", width=12)
        self.add_column("detail", key="detail")

    def set_alerts(self, alerts: list[Alert], redacting: bool = False) -> None:
        if alerts == self._alerts and redacting == self._redacting:
            show_if_empty(self)  # (the first call, with no alert yet, changes no row but must say so)
            return
        self._alerts, self._redacting = list(alerts), redacting
        # A message number is where Enter jumps: never rounded, never cut; its column grows to hold it.
        message_width = max([5, *(len(str(alert.message)) for alert in alerts)])
        if message_width != self.columns[ColumnKey("message")].width:
            self.clear(columns=True)
            self._add_columns(message_width)
        else:
            self.clear()
        for number, alert in enumerate(alerts):
            style = alert.kind.style
            self.add_row(Text(str(alert.message)), Text(alert.kind.key, style=style), Text(one_line(alert.constraint or "—", 12)),
                         Text(redact_text_if(one_line(alert.detail, 300), redacting)), key=str(number))
        show_if_empty(self)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        alert = self._alerts[int(str(event.row_key.value))]
        self.post_message(self.Jump(alert.compaction or alert.message))
