"""A table of a name column then count columns, as many as fit whole in its pane (the Tools and Agents panes)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import DataTable

from ctxtop.tui.widgets.cells import counts_that_fit


class CountsTable(DataTable):
    """``NAME``: the name column's key, label and least and most cells; ``COUNTS``: each count column's label, key and
    cells, the most telling first. On a resize the columns are laid out again (``counts_that_fit``) and ``refill``
    puts back what was shown."""

    NAME: ClassVar[tuple[str, str, tuple[int, int]]]
    COUNTS: ClassVar[tuple[tuple[str, str, int], ...]]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name_width, self.counts = self.NAME[2][1], self.COUNTS

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self._add_columns()

    def _add_columns(self) -> None:
        key, label, _ = self.NAME
        self.add_column(label, key=key, width=self.name_width)
        for label, key, width in self.counts:
            self.add_column(Text(label, justify="right"), key=key, width=width)
        self.add_more_columns()

    def add_more_columns(self) -> None:
        """Columns after the counts (text that may be cut at the pane's edge)."""

    def on_resize(self) -> None:
        name_width, shown = counts_that_fit(self.size.width, [width for _, _, width in self.COUNTS], self.NAME[2])
        if (name_width, shown) != (self.name_width, len(self.counts)):
            self.name_width, self.counts = name_width, self.COUNTS[:shown]
            self.clear(columns=True)
            self._add_columns()
            self.refill()

    def refill(self) -> None:
        """Show again what was shown before the columns were laid out again."""
