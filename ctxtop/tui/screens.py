"""Modal screens: the key help."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from ctxtop.tui.keymap import help_rows

# Every key of the main screen, as the help screen and the README list them.
KEYS: list[tuple[str, str]] = help_rows()


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 100; max-width: 95%; height: auto; max-height: 90%; border: round $accent; background: $surface; padding: 0 1; }
    HelpScreen DataTable { height: auto; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("ctxtop keys", style="bold"))
            table: DataTable = DataTable(show_cursor=False)
            table.add_columns("key", "action")
            for key, action in KEYS:
                table.add_row(Text(key, style="bold"), Text(action))
            yield table
            yield Static(Text("Esc closes", style="dim"))
