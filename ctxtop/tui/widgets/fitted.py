"""One or two lines of text made for the width they have, each time they are drawn."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

Make = Callable[[int | None], Text]  # the text for a width (None: not laid out yet)


class Fitted(Static):
    """A Static whose text is made for its width at each draw, a resize included: a line that would wrap
    out of a fixed height (the header's two rows, the banner's one) is cut instead (``cut``)."""

    def __init__(self, make: Make | None = None, **options) -> None:
        super().__init__(**options)
        self._make: Make = make or (lambda _width: Text())

    def show(self, make: Make) -> None:
        self._make = make
        self.refresh()

    def render(self) -> Text:
        return self._make(self.content_size.width or None)


def cut(text: Text, width: int | None) -> Text:
    """Each line of ``text`` cut to ``width`` columns with an ellipsis (a copy; as it is when None)."""
    if width is None:
        return text
    lines = text.split("\n", allow_blank=True)
    for line in lines:
        line.truncate(width, overflow="ellipsis")
    return Text("\n").join(lines)
