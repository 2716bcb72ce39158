"""Modal screens: the key help."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

# Every key of the main screen, as the help screen and the README list them.
KEYS: list[tuple[str, str]] = [
    ("← / →", "previous / next message"),
    ("[ / ]", "previous / next compaction, opening its compaction view"),
    ("c / Esc", "open the view of the compaction at or before the cursor / close it"),
    ("Home / End", "first / latest message"),
    ("↑ / ↓", "select a block in the window list"),
    ("f", "follow the latest message on / off"),
    ("p", "pin the selected block, or the text selected in the detail pane"),
    ("u", "unpin (the highlighted constraint, or the one in the selected block); an auto-detected rule is hidden"),
    ("U", "bring back the auto-detected rules hidden in this session"),
    ("s", "cycle the strategy marked in the window list"),
    ("e", "export the snapshot (JSON + Markdown) and an SVG screenshot"),
    ("/", "search text in the window"),
    ("a", "in the detail pane: show all of a long block"),
    ("b", "terminal bell on alerts on / off"),
    ("r", "redaction on / off: mask secrets, emails and phones on screen and in exports"),
    ("Tab", "move between panes; Enter on an alert jumps to its compaction"),
    ("ctrl+p", "command palette: every action by name"),
    ("?", "this help"),
    ("q", "quit"),
]


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
