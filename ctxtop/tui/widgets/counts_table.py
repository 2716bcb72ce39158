"""A table of a name column, then count columns, as many as fit whole in its pane, then text columns in the room
the counts leave (the Tools and Agents panes)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.widgets import DataTable

from ctxtop.tui.widgets.cells import counts_that_fit, texts_that_fit


class CountsTable(DataTable):
    """``NAME``: the name column's key, label and least and most cells; ``COUNTS``: each count column's label, key and
    cells, the most telling first; ``TEXTS``: each text column's label, key and least and most cells (None: the rest).
    On a resize the columns are laid out again (``counts_that_fit``, ``texts_that_fit``) and ``refill`` puts back
    what was shown, its texts cut to ``text_widths`` with an ellipsis."""

    NAME: ClassVar[tuple[str, str, tuple[int, int]]]
    COUNTS: ClassVar[tuple[tuple[str, str, int], ...]]
    TEXTS: ClassVar[tuple[tuple[str, str, tuple[int, int | None]], ...]] = ()

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name_width, self.counts = self.NAME[2][1], self.COUNTS
        # The text columns shown and their widths: none until the first resize says how much room there is.
        self.text_widths: dict[str, int] = {}

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self._add_columns()

    def _add_columns(self) -> None:
        key, label, _ = self.NAME
        self.add_column(label, key=key, width=self.name_width)
        for label, key, width in self.counts:
            self.add_column(Text(label, justify="right"), key=key, width=width)
        for label, key, _ in self.TEXTS:
            if key in self.text_widths:
                self.add_column(label, key=key, width=self.text_widths[key])

    def on_resize(self) -> None:
        self.lay_out()

    def text_bounds(self) -> list[tuple[int, int | None]]:
        """Each text column's least and most cells now: ``TEXTS``'s, or narrower where what it shows is."""
        return [cells for _, _, cells in self.TEXTS]

    def lay_out(self) -> None:
        """The columns laid out again, when the width or ``text_bounds`` changed."""
        if not self.size.width:  # not laid out yet (in a tab not shown): its first resize lays it out
            return
        name_width, shown, room = counts_that_fit(self.size.width, [width for _, _, width in self.COUNTS], self.NAME[2])
        widths = texts_that_fit(room, self.text_bounds())
        text_widths = {key: width for (_, key, _), width in zip(self.TEXTS, widths)}
        if (name_width, shown, text_widths) != (self.name_width, len(self.counts), self.text_widths):
            self.name_width, self.counts, self.text_widths = name_width, self.COUNTS[:shown], text_widths
            self.clear(columns=True)
            self._add_columns()
            self.refill()

    def refill(self) -> None:
        """Show again what was shown before the columns were laid out again."""
