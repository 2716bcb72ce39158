"""The line under an empty table saying why it is empty, rather than a bare header."""

from __future__ import annotations

from textual.widgets import DataTable, Static


class EmptyNote(Static):
    """Shown under its sibling table while that table has no rows (``show_if_empty``)."""

    # Hidden until the table is first filled: while a log loads, "none found" would be said too soon.
    DEFAULT_CSS = "EmptyNote { color: $text-muted; padding: 0 1; display: none; }"


def show_if_empty(table: DataTable) -> None:
    """Show the notes beside ``table`` when it has no rows, hide them when it has some.

    An empty table scrolls no way: its header alone, wider than a narrow pane, would otherwise draw a horizontal
    scrollbar between the header and the note, a stray row that scrolls nothing the user can see."""
    empty = table.row_count == 0
    table.styles.overflow_x = "hidden" if empty else "auto"
    if table.parent is not None:
        for note in table.parent.query_children(EmptyNote):
            note.display = empty
