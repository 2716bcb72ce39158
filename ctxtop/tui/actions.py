"""The user's actions: moving through the session, pins, strategies, redaction, export, search, help.

Mixed into CtxtopApp; every action is also in the command palette.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import work
from textual.app import SystemCommand
from textual.screen import Screen
from textual.widgets import Input, TabbedContent

from ctxtop.context.output.redact import redact_text
from ctxtop.context.output.sanitize import one_line
from ctxtop.tui.errors import USER_ERRORS
from ctxtop.tui.export import export_snapshot
from ctxtop.tui.messages import Exported
from ctxtop.tui.screens import HelpScreen
from ctxtop.tui.widgets.panels import ConstraintsTable, StrategiesTable
from ctxtop.tui.widgets.timeline import Timeline
from ctxtop.tui.widgets.window_list import WindowList, redacted

# A pin is a rule, not a document: longer blocks must be pinned by selecting the rule's words.
MAX_PIN_CHARS = 240


class UserActions:
    """Key bindings' actions and their command-palette entries."""

    def _go(self, message: int) -> None:
        if self.session is None or self.available == 0:
            return
        target = max(1, min(self.available, message))
        self.follow = target == self.available and self.follow
        if target == self.available:
            self.unseen = 0
        if target != self.cursor:
            self.cursor = target
            self.query_one(Timeline).set_position(self.available, target)
            self.compute_view(target)
        self._update_header()

    def action_move(self, step: int) -> None:
        if step < 0:
            self.follow = False
        self._go((self.cursor or 0) + step)

    def action_jump(self, where: str) -> None:
        if where == "start":
            self.follow = False
            self._go(1)
        else:
            self.follow, self.unseen = True, 0
            self._go(self.available)

    def action_compaction(self, step: int) -> None:
        if self.audit is None or self.cursor is None:
            return
        marks = sorted({c.event.message for c in self.audit.compactions if c.event.message <= self.available})
        ahead = [m for m in marks if (m > self.cursor if step > 0 else m < self.cursor)]
        if not ahead:
            self.notify("no compaction " + ("after" if step > 0 else "before") + " this message", timeout=2)
            return
        self.follow = False
        target = ahead[0] if step > 0 else ahead[-1]
        self._go(target)
        self.open_compaction(target)

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        self.unseen = 0
        if self.follow:
            self._go(self.available)
        self._update_header()

    def _shown(self, text: str) -> str:
        """Log-derived text as it may appear on screen (masked while redacting)."""
        return redact_text(text) if self.redacting else text

    def action_toggle_redact(self) -> None:
        """Mask secrets and personal data everywhere on screen and in exports (for screenshots)."""
        self.redacting = not self.redacting
        self.query_one(ConstraintsTable).set_constraints(self.constraints, self.redacting)
        self._announce_alerts()
        if self.view is not None:
            self.query_one(WindowList).set_rows(redacted(self.view.rows) if self.redacting else self.view.rows)
            self._mark_strategy()
            self.query_one(ConstraintsTable).show(self.view.snapshot["constraints"])
        self._update_header()
        self.notify(f"redaction {'on' if self.redacting else 'off'}", timeout=2)

    def action_toggle_bell(self) -> None:
        self.bell_on = not self.bell_on
        self.notify(f"bell {'on' if self.bell_on else 'off'}", timeout=2)
        self._update_header()

    def action_cycle_strategy(self) -> None:
        table = self.query_one(StrategiesTable)
        table.move_cursor(row=(table.cursor_row + 1) % table.row_count)

    def action_pin(self) -> None:
        text = (self.screen.get_selected_text() or "").strip()
        if not text:
            selected = self._selected_block()
            if selected is None:
                self.notify("nothing to pin: select a block, or select text in the detail pane", severity="warning")
                return
            window, index = selected
            text = window.blocks[index].text.strip()
        if not text or len(text) > MAX_PIN_CHARS:
            self.notify(f"that block is {len(text):,} characters: select the rule's words in the detail pane and press p",
                        severity="warning")
            return
        if any(c.text == text for c in self.constraints):
            self.notify("already tracked", timeout=2)
            return
        self.change_rules("pin", text)

    def action_unpin(self) -> None:
        """Unpin the rule selected in the Constraints tab (an auto-detected one is hidden for this
        session), else the pin the selected block states."""
        target: str | None = None
        table = self.query_one(ConstraintsTable)
        if self.query_one(TabbedContent).active == "tab-constraints" and table.row_count:
            target = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if target is None and (selected := self._selected_block()) is not None:
            window, index = selected
            block_text = window.blocks[index].text
            target = next((c.id for c in reversed(self.constraints) if c.source == "saved" and c.text in block_text), None)
        if target is None:
            self.notify("nothing to unpin here (pins given on the command line stay)", severity="warning", timeout=3)
            return
        self.change_rules("unpin", target)

    def action_unhide(self) -> None:
        """Bring back the auto-detected rules hidden for this session."""
        self.change_rules("unhide", None)

    def action_export(self) -> None:
        if self.session is None or self.cursor is None:
            return
        self.write_export(self.cursor, self.export_screenshot(title="ctxtop"))

    @work(thread=True, exit_on_error=False, group="export")
    def write_export(self, at: int, svg: str) -> None:
        tracker = self.tracker
        assert tracker is not None
        try:
            paths = export_snapshot(tracker, at, svg, self.export_dir, redacting=self.redacting)
        except USER_ERRORS as exc:
            self.call_from_thread(self.notify, f"export failed: {one_line(str(exc), 160)}", severity="error")
            return
        self.post_message(Exported(paths))

    def on_exported(self, message: Exported) -> None:
        self.last_export = message.paths
        self.notify("\n".join(str(p) for p in message.paths), title="exported", timeout=8)

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-visible")
        search.focus()

    # A named handler, not @on: decorated handlers are only collected from Textual classes, not mixins.
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search":
            return
        query = event.value.strip().casefold()
        if not query or self.view is None:
            return
        blocks = self.view.window.blocks
        start = self.query_one(WindowList).selected
        for offset in range(1, len(blocks) + 1):
            index = (start + offset) % len(blocks)
            if query in blocks[index].text.casefold():
                self.query_one(WindowList).select(index)
                return
        self.notify(f"not in the window at message {self.view.at}", severity="warning", timeout=3)

    def on_key(self, event) -> None:
        search = self.query_one("#search", Input)
        if event.key == "escape" and search.has_class("-visible"):
            search.remove_class("-visible")
            self.query_one(WindowList).focus()
            event.stop()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Previous message", "Move the cursor one message back", lambda: self.action_move(-1))
        yield SystemCommand("Next message", "Move the cursor one message on", lambda: self.action_move(1))
        yield SystemCommand("Previous compaction", "Jump to the compaction before the cursor", lambda: self.action_compaction(-1))
        yield SystemCommand("Next compaction", "Jump to the compaction after the cursor", lambda: self.action_compaction(1))
        yield SystemCommand("First message", "Jump to the first message", lambda: self.action_jump("start"))
        yield SystemCommand("Latest message", "Jump to the latest message", lambda: self.action_jump("end"))
        yield SystemCommand("Compaction view", "What the compaction at or before the cursor did: before and after, rules, facts",
                            self.action_toggle_compaction)
        yield SystemCommand("Follow on/off", "Keep the cursor on the latest message", self.action_toggle_follow)
        yield SystemCommand("Pin", "Pin the selected block or the selected text as a constraint", self.action_pin)
        yield SystemCommand("Unpin", "Remove a pin made in the UI, or hide an auto-detected rule", self.action_unpin)
        yield SystemCommand("Unhide rules", "Bring back the auto-detected rules hidden in this session", self.action_unhide)
        yield SystemCommand("Cycle strategy", "Mark the next strategy's effect in the window list", self.action_cycle_strategy)
        yield SystemCommand("Export snapshot", "Write JSON, Markdown and an SVG screenshot", self.action_export)
        yield SystemCommand("Search", "Find text in the window", self.action_search)
        yield SystemCommand("Bell on/off", "Ring the terminal bell on new alerts", self.action_toggle_bell)
        yield SystemCommand("Redaction on/off", "Mask secrets, emails and phone numbers on screen and in exports", self.action_toggle_redact)
        yield SystemCommand("Keys", "Show every key", self.action_help)
