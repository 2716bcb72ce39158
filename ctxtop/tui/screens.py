"""Modal screens: the key help."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ctxtop.tui.keymap import help_rows

# Every key of the main screen, as the help screen and the README list them.
KEYS: list[tuple[str, str]] = help_rows()


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close", key_display="Esc / q / ?")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 100; max-width: 95%; height: auto; max-height: 90%; border: round $accent; background: $surface; padding: 0 1; }
    HelpScreen VerticalScroll { height: auto; max-height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble(("ctxtop keys", "bold"), ("  Esc closes · ↑ ↓ scroll", "dim")))
            # A Rich table wraps a long action onto more lines (a DataTable row is one line: it cut them).
            table = Table("key", "action", box=None, expand=True, header_style="bold dim", padding=(0, 2, 0, 0))
            for key, action in KEYS:
                table.add_row(Text(key, style="bold", no_wrap=True), Text(action))
            with VerticalScroll():
                yield Static(table, id="help-keys")
        # Its own keys at the bottom, over the main screen's: there, q quits; here, it closes the help.
        yield Footer(show_command_palette=False)
