"""The user's actions: moving through the session, pins, strategies, redaction, export, search, help.

Mixed into CtxtopApp; every action is also in the command palette. Actions change the
app's state (``_change``); the panes follow it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from rich.cells import cell_len
from textual import events, work
from textual.app import SystemCommand
from textual.screen import Screen
from textual.widgets import DataTable, Input, TabbedContent

from ctxtop.context.sanitize import one_line
from ctxtop.context.window.session import resolved_message
from ctxtop.tui.errors import USER_ERRORS
from ctxtop.tui.export import export_directory, export_snapshot
from ctxtop.tui.keymap import COMMANDS
from ctxtop.tui.messages import Exported, SearchDone
from ctxtop.tui.parts import AppParts
from ctxtop.tui.screens import HelpScreen
from ctxtop.tui.widgets.panels import AlertsTable, ConstraintsTable, StrategiesTable
from ctxtop.tui.widgets.subagents import SubagentsTable
from ctxtop.tui.widgets.window_list import WindowList

# A pin is a rule, not a document: longer blocks must be pinned by selecting the rule's words.
MAX_PIN_CHARS = 240


def no_such_message(number: int, available: int) -> str:
    """What `g` or `--at` says of a message the session does not hold (yet)."""
    if available < 1:  # (a log still to be written, or emptied)
        return f"no message {number:,}: the session holds none yet"
    return f"no message {number:,}: the session has 1 to {available:,} (negative counts from the end)"


class UserActions(AppParts):
    """Key bindings' actions and their command-palette entries."""

    def _go(self, message: int, *, follow: bool | None = None) -> None:
        """Move the cursor to ``message`` (the view there follows); ``follow``: turn following on or off too."""
        if self.session is None or self.available == 0:
            return
        target = max(1, min(self.available, message))
        following = self.follow if follow is None else follow
        latest = target == self.available
        self._change(cursor=target, follow=latest and following, unseen=0 if latest else self.unseen)
        self._compaction_view_follows(target)

    def _compaction_view_follows(self, message: int) -> None:
        """An open compaction view shows the compaction at or before the cursor (closed before the first)."""
        view, tracker = self.state.compaction, self.tracker
        if view is None or tracker is None:
            return
        number = tracker.compaction_at(message)
        if number is None:
            self._change(compaction=None)
        elif number != view["number"]:
            self.open_compaction(message)

    def action_move(self, step: int) -> None:
        self._go((self.cursor or 0) + step, follow=False if step < 0 else None)

    def action_jump(self, where: str) -> None:
        if where == "start":
            self._go(1, follow=False)
        else:
            self._go(self.available, follow=True)

    def action_compaction(self, step: int) -> None:
        if self.audit is None or self.cursor is None:
            return
        marks = sorted({c.event.message for c in self.audit.compactions if c.event.message <= self.available})
        ahead = [m for m in marks if (m > self.cursor if step > 0 else m < self.cursor)]
        if not ahead:
            self.notify("no compaction " + ("after" if step > 0 else "before") + " this message", timeout=2)
            return
        target = ahead[0] if step > 0 else ahead[-1]
        self._go(target, follow=False)
        if self.state.compaction is None:  # (an open view followed the cursor there in _go)
            self.open_compaction(target)

    def action_toggle_follow(self) -> None:
        self._change(follow=not self.follow, unseen=0)
        if self.follow:
            self._go(self.available)

    def action_toggle_redact(self) -> None:
        """Mask secrets and personal data everywhere on screen and in exports (for screenshots)."""
        self._change(redacting=not self.redacting)
        self.notify(f"redaction {'on' if self.redacting else 'off'}", timeout=2)

    def action_toggle_bell(self) -> None:
        self._change(bell_on=not self.bell_on)
        self.notify(f"bell {'on' if self.bell_on else 'off'}", timeout=2)

    def action_cycle_strategy(self) -> None:
        table = self.query_one(StrategiesTable)
        table.move_cursor(row=(table.cursor_row + 1) % table.row_count)

    def _rules_need_a_session(self) -> bool:
        """Whether the rules cannot change yet (no log read): then the user is told so."""
        if self.tracker is None:
            self.notify("no session yet: rules can be pinned or unpinned once the log is read", timeout=3)
            return True
        return False

    def action_pin(self) -> None:
        if self._rules_need_a_session():
            return
        text = (self.screen.get_selected_text() or "").strip()
        if not text and self.state.compaction is not None:  # (the window list, and its selected block, are behind it)
            self.notify("nothing to pin in the compaction view: select the rule's words, or Esc and select a block",
                        severity="warning")
            return
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
        if self._rules_need_a_session():
            return
        if self.state.compaction is not None:  # (the panes and the window list are behind it)
            self.notify("nothing to unpin in the compaction view: Esc, then u on a constraint or a block", severity="warning")
            return
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
        if not self._rules_need_a_session():
            self.change_rules("unhide", None)

    def action_export(self) -> None:
        if self.session is None or self.cursor is None:
            return
        self.write_export(self.cursor, self.export_screenshot(title="ctxtop"))

    @work(thread=True, exit_on_error=False, group="export")
    def write_export(self, at: int, svg: str) -> None:
        tracker = self.tracker
        assert tracker is not None
        back = self.state.return_to
        logs = [self.path] + ([back.path] if back is not None else [])  # (a sub-agent's, and its session's)
        try:
            directory = export_directory(self.export_dir, logs, self.session_dirs)
            paths = export_snapshot(tracker, at, svg, directory, redacting=self.redacting)
        except USER_ERRORS as exc:
            self.call_from_thread(self.notify, f"export failed: {one_line(str(exc), 160)}", severity="error")
            return
        self.post_message(Exported(paths))

    def on_exported(self, message: Exported) -> None:
        self.last_export = message.paths
        self.notify("\n".join(str(p) for p in message.paths), title="exported", timeout=8)

    # --- the prompt: search and go-to ------------------------------------------------------------
    def _open_prompt(self, mode: str, *placeholders: str) -> None:
        """The prompt for ``mode``, saying the first of ``placeholders`` (fullest first) that fits it: an Input crops
        its placeholder without a mark, and its end says how to close it (the footer shows no Esc)."""
        prompt = self.query_one("#prompt", Input)
        self.prompt_mode = mode
        room = self.size.width - prompt.styles.gutter.width - 1  # (the cursor's cell)
        prompt.placeholder = next((text for text in placeholders if cell_len(text) <= room), placeholders[-1])
        prompt.value = ""
        prompt.add_class("-visible")
        prompt.focus()

    def _close_prompt(self) -> None:
        self.query_one("#prompt", Input).remove_class("-visible")
        self.query_one(WindowList).focus()

    def action_search(self) -> None:
        self._open_prompt("search", "search every message (Enter: search; then n / N: next / previous match; Esc: close)",
                          "search every message (Enter; n / N: next / previous match; Esc: close)",
                          "search (Enter; n / N: next / previous; Esc: close)", "search (Esc: close)")

    def action_goto(self) -> None:
        self._open_prompt("goto", "go to message number (negative counts from the end; Esc: close)",
                          "message number (negative: from the end; Esc: close)", "message number (Esc: close)")

    # A named handler, not @on: decorated handlers are only collected from Textual classes, not mixins.
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        value = event.value.strip()
        self._close_prompt()
        if not value:
            return
        if self.prompt_mode == "goto":
            try:
                number = int(value)
            except ValueError:
                self.notify(f"not a message number: {one_line(value, 40)}", severity="warning", timeout=3, markup=False)
                return
            # Of the messages arrived so far (a replayed demo has not shown them all).
            target = resolved_message(number, self.available)
            if target is None:
                # Said, not guessed: 0 or 9999 used to land on the last message without a word.
                self.notify(no_such_message(number, self.available), severity="warning", timeout=3, markup=False)
                return
            self._go(target, follow=False)
        else:
            self._change(searching=value)  # (in the title until the matches come: a notice would outlive them)
            self.run_search(value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search")
    def run_search(self, query: str) -> None:
        tracker = self.tracker
        if tracker is not None:
            self.post_message(SearchDone(query, tracker.search(query, until=self.available)))

    def on_search_done(self, message: SearchDone) -> None:
        self._change(search=message, search_index=-1, searching=None)
        if not message.matches:
            self.notify(f"no match for '{one_line(message.query, 60)}' in {self.available:,} messages", severity="warning",
                        timeout=4, markup=False)
            return
        self.action_search_step(1)

    def action_search_step(self, step: int) -> None:
        """The next (or previous) match from the cursor's block on, wrapping around the session."""
        search = self.search
        if search is None:
            self.notify("no search yet: / searches every message", timeout=2)
            return
        if not search.matches:
            self.notify(f"no match for '{one_line(search.query, 60)}': / searches again", timeout=2, markup=False)
            return
        matches = search.matches
        here = (self.cursor or 0, -1)
        if self.view is not None and self.view.window.blocks:
            selected = self.view.window.blocks[min(self.query_one(WindowList).selected, len(self.view.window.blocks) - 1)]
            here = (selected.entry.index, selected.position)  # where the user stands, in the matches' terms
        if step > 0:
            following = [i for i, match in enumerate(matches) if match > here]
            index = following[0] if following else 0
        else:
            preceding = [i for i, match in enumerate(matches) if match < here]
            index = preceding[-1] if preceding else len(matches) - 1
        message, position = matches[index]
        self.select_after_view = (message, position)
        self._change(search_index=index, follow=False)
        if message == self.cursor and self.view is not None:
            self._select_block(message, position)
        else:
            self._go(message)

    def _select_block(self, message: int, position: int) -> None:
        """Select, in the window on screen, block ``position`` of message ``message`` (a search match)."""
        if self.view is None:
            return
        for index, item in enumerate(self.view.window.blocks):
            if item.entry.index == message and item.position == position:
                self.query_one(WindowList).select(index)
                break
        self.select_after_view = None

    def action_show_pane(self, pane: str) -> None:
        self.query_one(TabbedContent).active = pane
        # The panes whose rows are picked with Enter (an alert to jump to, a sub-agent to open) take the focus, so
        # that "4 Enter" does what it says; ←/→ still step through messages (priority bindings).
        picked: DataTable | None = (self.query_one(AlertsTable) if pane == "tab-alerts" else
                                    self.query_one(SubagentsTable) if pane == "tab-agents" else None)
        if picked is not None and picked.row_count:
            picked.focus()

    def prompt_opening(self) -> bool:
        """The prompt is open but does not have the focus yet: keys typed right after ``g`` or ``/``
        arrive before it does, and belong to it (not to the bindings: "g 2 0 5" is no pane switch)."""
        prompt = self.query_one("#prompt", Input)
        return prompt.has_class("-visible") and self.focused is not prompt

    def on_key(self, event) -> None:
        if event.key == "escape" and self.query_one("#prompt", Input).has_class("-visible"):
            self._close_prompt()
            event.stop()

    def type_ahead(self, event: events.Key) -> bool:
        """Give a key typed while the prompt opens to the prompt, at once (True). Called as the app receives
        the key, before any binding or widget sees it: one sent on to the widget that still has the focus
        is handled after the focus has moved, by whichever binding then matches ("g205⏎" switched panes)."""
        if not self.prompt_opening():
            return False
        prompt = self.query_one("#prompt", Input)
        if event.key == "escape":
            self._close_prompt()
        elif event.key == "enter":
            prompt.post_message(Input.Submitted(prompt, prompt.value))
        elif event.key == "backspace":
            prompt.action_delete_left()
        elif event.is_printable and event.character:
            prompt.insert_text_at_cursor(event.character)
        return True

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Keys" panel would stand beside our "Help: every key", which lists the same keys and more.
        yield from (command for command in super().get_system_commands(screen) if command.title != "Keys")
        for command in COMMANDS:
            if command.action == "back_to_session" and self.state.return_to is None:
                continue  # (offered only from a sub-agent)
            if command.palette:
                yield SystemCommand(command.palette, command.palette_help, partial(self.run_action, command.action))
