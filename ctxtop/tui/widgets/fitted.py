"""One or two lines of text made for the width they have, each time they are drawn."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static

Make = Callable[[int | None], Text]  # the text for a width (None: not laid out yet)
# A part of a line (``fitted_parts``): its forms, fullest first; its style; whether it may be cut with "…" (words), or
# shows whole or not at all (figures).
Part = tuple[list[str | Text], str, bool]


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


def fitted_parts(parts: list[Part], width: int | None) -> Text:
    """A line of ``parts`` (forms fullest first, style, whether it may be cut) for ``width`` cells: each part in its
    fullest form that fits; the first that does not is cut with "…" when it may be and a few of its letters fit (never
    "1 / 7…", which reads as another count, nor a bare " ·…"), else left out with the rest.
    The first part takes a shorter form when that lets more figures after it show (the search's count over the blocks')."""
    def laid_out(first: str | Text) -> tuple[Text, int]:
        """The line with the first part in the form ``first``, and how many figures it left out."""
        text = Text()
        for index, (forms, style, cuttable) in enumerate(parts):
            shapes = [form if isinstance(form, Text) else Text(form, style=style) for form in ([first] if index == 0 else forms)]
            form = next((form for form in shapes if width is None or text.cell_len + form.cell_len <= width), None)
            if form is not None:
                text.append(form)
                continue
            # (a part cut to its separator and "…" — " ·…", "  (…" — says nothing: left out)
            if cuttable and (not text or width is None or sum(c.isalnum() for c in cut(shapes[-1], width - text.cell_len).plain) >= 2):
                text.append(shapes[-1])
            return cut(text, width), sum(not may_cut for _, _, may_cut in parts[index:])
        return text, 0

    if not parts:
        return Text()
    return min((laid_out(first) for first in parts[0][0]), key=lambda tried: tried[1])[0]  # (the fullest of the best)
