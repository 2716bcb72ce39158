"""The selected block in full, syntax-highlighted with pygments, with its tokens and source line."""

from __future__ import annotations

import json

from rich.syntax import Syntax
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from ctxtop.context.output.redact import redact_text
from ctxtop.context.sanitize import clean_text, one_line
from ctxtop.context.window.replay import WindowBlock
from ctxtop.parsers.model import TOOL_CALL

MAX_CHARS = 60_000  # beyond this the pane shows the start; export has everything
SHELL_TOOLS = ("bash", "shell", "exec_command", "local_shell", "run_terminal_cmd")


def guess_lexer(item: WindowBlock, text: str) -> str | None:
    """A pygments lexer name for the block, or None for plain text."""
    stripped = text.lstrip()
    if stripped.startswith(("diff --git", "--- a/", "@@ ")) or "\n@@ " in text[:2000]:
        return "diff"
    if item.category == TOOL_CALL and (item.block.tool_name or "").lower() in SHELL_TOOLS:
        return "json"
    if stripped[:1] in "{[":
        try:
            json.loads(stripped)
            return "json"
        except ValueError:
            pass
    if stripped.startswith(("#!/bin/", "$ ")):
        return "bash"
    if stripped.startswith(("def ", "import ", "from ", "class ")):
        return "python"
    return None


def describe(item: WindowBlock) -> Text:
    entry = item.entry
    header = Text()
    header.append(f"message {entry.index}", style="bold")
    header.append(f" · {item.category}")
    header.append(f" · {'≈' if item.estimated else ''}{item.tokens:,} tokens")
    if item.block.tool_name:
        header.append(" · ")
        header.append(one_line(item.block.tool_name, 40), style="bold")
    if item.block.tool_id:
        header.append(f" · {one_line(item.block.tool_id, 40)}", style="dim")
    if entry.line:
        header.append(f" · line {entry.line}", style="dim")
    if entry.timestamp:
        header.append(f" · {one_line(entry.timestamp, 32)}", style="dim")
    if item.cleared:
        header.append(" · cleared (the model sees a placeholder)", style="yellow")
    return header


class Detail(VerticalScroll):
    """Scrollable full text of one block; the text is selectable so part of it can be pinned."""

    DEFAULT_CSS = """
    Detail > #detail-body { width: 100%; }
    """

    BINDINGS = [Binding("a", "show_all", "Show all", show=False)]  # the pane says "(a: show all)" where a text is cut

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._item: WindowBlock | None = None
        self._redacting = False
        self._whole = False  # the user asked for all of a long block

    def compose(self):
        yield Static(Text("select a block in the window list", style="dim"), id="detail-body")

    def show(self, item: WindowBlock | None, *, redacting: bool = False) -> None:
        if item is not self._item:
            self._whole = False
        self._item, self._redacting = item, redacting
        body_widget = self.query_one("#detail-body", Static)
        if item is None:
            body_widget.update(Text("the window is empty here", style="dim"))
            return
        text = clean_text(item.text)
        if redacting:
            text = redact_text(text)
        more = 0 if self._whole else len(text) - MAX_CHARS
        if more > 0:
            text = text[:MAX_CHARS]
        # Highlighting a huge text would stall the screen: beyond the cap it is shown plain.
        lexer = guess_lexer(item, text) if len(text) <= MAX_CHARS else None
        # One Text (highlighted by pygments through Syntax.highlight), so the pane's text can be
        # selected and pinned; Syntax treats its input literally, nothing in it is read as markup.
        body = Syntax(text, lexer, theme="ansi_dark", background_color="default").highlight(text) if lexer else Text(text)
        body.rstrip()
        content = Text.assemble(describe(item), "\n\n", body)
        if more > 0:
            content.append(f"\n… {more:,} more characters (a: show all)", style="dim")
        body_widget.update(content)
        self.scroll_home(animate=False)

    def action_show_all(self) -> None:
        if self._item is not None and not self._whole:
            self._whole = True
            self.show(self._item, redacting=self._redacting)
