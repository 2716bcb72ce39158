"""Every action of the main screen in one registry: the key bindings, the footer, the help screen,
the command palette and the README's key table all come from it.

A new action is one ``Command`` here (and its ``action_…`` method); nothing else lists keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True, slots=True)
class Command:
    key: str  # Textual's key name(s), comma-separated
    action: str  # the action it runs, with its arguments ("compaction(1)")
    help_key: str  # how the help and the README write the key; commands sharing one are one help row
    help: str  # the help row's text (the first command of a row gives it)
    palette: str | None  # the command palette's title; None: not in the palette
    palette_help: str = ""
    footer: str = ""  # the footer's label; "": not in the footer
    priority: bool = False  # before the focused widget: tables and lists must not swallow stepping keys
    display: str | None = None  # how the footer shows the key, where Textual's name for it is not what is typed
    footer_rank: int = 0  # a footer too narrow for every entry leaves out the lowest ranks first


# Above every other entry: whoever sees only part of the footer still sees how to see every key, and how to leave.
HELP_AND_QUIT_RANK = 100

COMMANDS: tuple[Command, ...] = (
    # A pair of keys is one footer entry (the first's, shown as both keys): at 120 columns the footer must still end with Quit
    # (the palette and the detail pane's "a" are not in it: the help lists one, the pane itself says the other).
    # Narrower, the footer leaves out entries by footer_rank: Strategy first, then Compaction ("[ / ]" opens the same
    # view); at 80 columns every other entry stays, and Help and Quit stay at any width.
    Command("left", "move(-1)", "← / →", "previous / next message", "Previous message", "Move the cursor one message back", "Message",
            True, "← / →", footer_rank=8),
    Command("right", "move(1)", "← / →", "", "Next message", "Move the cursor one message on", "", True),
    Command("left_square_bracket", "compaction(-1)", "[ / ]", "previous / next compaction, opening its compaction view",
            "Previous compaction", "Jump to the compaction before the cursor and show what it did", "Compactions", True, "[ / ]",
            footer_rank=7),
    Command("right_square_bracket", "compaction(1)", "[ / ]", "", "Next compaction",
            "Jump to the compaction after the cursor and show what it did", "", True, "]"),
    Command("home", "jump('start')", "Home / End", "first / latest message", "First message", "Jump to the first message", "", True),
    Command("end", "jump('end')", "Home / End", "", "Latest message", "Jump to the latest message", "", True),
    # g and / open the prompt before any widget sees the next key: keys typed fast after them are the prompt's.
    Command("g", "goto", "g", "go to a message by its number", "Go to message", "Type a message number and go there",
            priority=True),
    Command("c", "toggle_compaction", "c / Esc", "open the view of the compaction at or before the cursor / close it",
            "Compaction view", "What the compaction at or before the cursor did: before and after, rules, facts", "Compaction",
            footer_rank=2),
    Command("escape", "close_compaction", "c / Esc", "", None, display="Esc"),
    Command("1", "show_pane('tab-detail')", "1 2 3 4", "show the Detail, Constraints, Strategies or Alerts pane", "Show detail",
            "The selected block in full"),
    Command("2", "show_pane('tab-constraints')", "1 2 3 4", "", "Show constraints", "Each rule: its text, status and missing facts"),
    Command("3", "show_pane('tab-strategies')", "1 2 3 4", "", "Show strategies", "What each compaction strategy would do here"),
    Command("4", "show_pane('tab-alerts')", "1 2 3 4", "", "Show alerts", "Every rule lost, weakened or broken; Enter jumps there"),
    Command("5", "show_pane('tab-tools')", "5 6", "show the Tools or Agents (sub-agents) pane", "Show tools",
            "Calls and tokens per tool and per MCP server in the window"),
    Command("6", "show_pane('tab-agents')", "5 6", "", "Show sub-agents", "The session's sub-agents, each with its own window; Enter opens one"),
    Command("backspace", "back_to_session", "⌫", "from a sub-agent back to its session", "Back to the session",
            "Leave the sub-agent for the session it belongs to", display="⌫"),
    Command("f", "toggle_follow", "f", "follow the latest message on / off", "Follow on/off", "Keep the cursor on the latest message", "Follow",
            footer_rank=4),
    Command("p", "pin", "p", "pin the selected block (up to 240 characters: a longer one says to select the rule's words), "
                             "or the text selected in the detail pane", "Pin",
            "Pin the selected block or the selected text as a rule", "Pin", footer_rank=3),
    Command("u", "unpin", "u", "unpin (the highlighted constraint, or the one in the selected block); an auto-detected rule is hidden",
            "Unpin", "Remove a pin made in the UI, or hide an auto-detected rule"),
    Command("U", "unhide", "U", "bring back the auto-detected rules hidden in this session", "Unhide rules",
            "Bring back the auto-detected rules hidden in this session"),
    Command("s", "cycle_strategy", "s", "cycle the strategy marked in the window list", "Cycle strategy",
            "Mark the next strategy's effect in the window list", "Strategy", footer_rank=1),
    Command("e", "export", "e", "export the snapshot (JSON + Markdown), an SVG screenshot and the HTML report", "Export snapshot",
            "Write JSON, Markdown, an SVG screenshot and the HTML report", "Export",
            footer_rank=5),
    Command("slash", "search", "/", "search every message of the session (the window's title counts the matches)", "Search",
            "Find text anywhere in the session", "Search", priority=True, display="/",
            footer_rank=6),
    Command("n", "search_step(1)", "n / N", "next / previous match of the last search", None),
    Command("N", "search_step(-1)", "n / N", "", None),
    Command("b", "toggle_bell", "b", "terminal bell on alerts on / off", "Bell on/off", "Ring the terminal bell on new alerts"),
    Command("r", "toggle_redact", "r", "redaction on / off: mask secrets, emails and phones on screen and in exports", "Redaction on/off",
            "Mask secrets, emails and phone numbers on screen and in exports"),
    Command("question_mark", "help", "?", "this help", "Help: every key", "Show every key and what it does", "Help", display="?",
            footer_rank=HELP_AND_QUIT_RANK),
    Command("q", "quit", "q", "quit", None, "", "Quit", footer_rank=HELP_AND_QUIT_RANK),
)

# Actions bound before any widget: they must not also fire under a modal screen.
PRIORITY_ACTIONS = frozenset(c.action.split("(")[0] for c in COMMANDS if c.priority)
# Keys that are text in a text field: their actions give way to it (a "g" or "/" typed into the prompt).
TYPED_ACTIONS = frozenset({"goto", "search"})

# Keys that work in a widget rather than the whole screen, for the help and the README.
WIDGET_KEYS: tuple[tuple[str, str], ...] = (
    ("↑ / ↓", "select a block in the window list"),
    ("a", "in the detail pane: show all of a long block"),
    ("Enter", "in the Agents pane: open the highlighted sub-agent in this screen, with its own window"),
    ("Tab", "move between the window list, the panes and their tabs; Enter on an alert jumps to its compaction"),
    ("ctrl+p", "command palette: every action by name"),
)


def bindings() -> list[BindingType]:
    return [Binding(c.key, c.action, c.footer or c.help, show=bool(c.footer), priority=c.priority, key_display=c.display)
            for c in COMMANDS]


_FOOTER_RANKS = {c.action: c.footer_rank for c in COMMANDS if c.footer}


def footer_rank(action: str) -> int:
    """How long the footer entry of ``action`` stays as the footer narrows; an entry not made here (a widget's) goes first."""
    return _FOOTER_RANKS.get(action, 0)


def help_rows() -> list[tuple[str, str]]:
    """One row per key or key pair, in the registry's order, then the widgets' keys."""
    rows: dict[str, str] = {}
    for command in COMMANDS:
        rows.setdefault(command.help_key, command.help)
    return [*rows.items(), *WIDGET_KEYS]
