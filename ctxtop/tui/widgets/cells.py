"""Numbers in fixed-width table cells: whole when they fit, rounded with a unit when not, never cut.

A DataTable crops a cell wider than its column without a mark, and a cropped count reads as
another number ("11,172,775" in nine cells is "11,172,77"). Every fixed-width number cell in the
TUI goes through here instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text

from ctxtop.context.sanitize import cut

# Ascending: the smallest unit that keeps the figure under a thousand is the most precise one.
_UNITS = ((10**3, "k"), (10**6, "M"), (10**9, "B"), (10**12, "T"), (10**15, "P"), (10**18, "E"))
# A share of the window past this is a log reporting absurd sizes: said as such, not as twelve digits.
MAX_PERCENT = 1000


def percent_text(share: float) -> str:
    """A share of the window in at most seven characters: "38.7%", "≥1000%"."""
    return f"{share:.1f}%" if share < MAX_PERCENT else f"≥{MAX_PERCENT}%"


def fitted_count(value: int, width: int, mark: str = "") -> str:
    """``value`` in at most ``width`` characters: "12,345,678" when it fits, else "12.3M" (rounded, as
    its unit says); ``mark`` ("≈" for an estimate) leads either form. "#" fills a cell too narrow for
    any form, as a spreadsheet does, rather than show a wrong number."""
    whole = f"{mark}{value:,}"
    if len(whole) <= width:
        return whole
    for scale, unit in _UNITS:
        for decimals in (1, 0):
            mantissa = f"{value / scale:.{decimals}f}"
            if len(mantissa.lstrip("-").split(".")[0]) > 3:
                break  # 1000.0k: the next unit says it better
            compact = f"{mark}{mantissa}{unit}"
            if len(compact) <= width:
                return compact
    return "#" * width


def count_cell(value: int, width: int, mark: str = "") -> Text:
    """A right-aligned count for a column ``width`` cells wide (see fitted_count)."""
    return Text(fitted_count(value, width, mark), justify="right")


CELL_PADDING = 2  # a DataTable cell's padding, one each side
SCROLLBAR = 2  # the vertical scrollbar's columns


def counts_that_fit(width: int, count_widths: Sequence[int], name_width: tuple[int, int]) -> tuple[int, int, int]:
    """For a table of a name column (``name_width``: its least and most cells) then counts ``count_widths`` cells wide,
    in ``width`` cells: the name's width, how many of the counts are shown, each whole, and the cells left after them.
    The first count always (the most telling), then the name as wide as it may be, then the other counts that still fit
    whole: one that does not is left out, with those after it (a number cut at the pane's edge reads as another number)."""
    least, most = name_width
    room = width - SCROLLBAR
    first, *others = count_widths
    name = max(least, min(most, room - (first + CELL_PADDING) - CELL_PADDING))
    room -= name + CELL_PADDING + first + CELL_PADDING
    shown = 1
    for cells in others:
        if cells + CELL_PADDING > room:
            break
        shown += 1
        room -= cells + CELL_PADDING
    return name, shown, max(0, room)


def texts_that_fit(room: int, text_widths: Sequence[tuple[int, int | None]]) -> list[int]:
    """The widths of the text columns after the counts in the ``room`` cells they leave, in order. ``text_widths``:
    each column's least and most cells (None: as wide as there is room). The columns whose least fits are shown, in
    order (one that does not is left out, with those after it: two letters of a word are no column); each then as
    wide as it may be, up to its most, while the ones after it keep their least."""
    leasts: list[int] = []
    for least, _ in text_widths:
        if sum(leasts) + len(leasts) * CELL_PADDING + least + CELL_PADDING > room:
            break
        leasts.append(least)
    widths: list[int] = []
    for shown, (least, most) in enumerate(text_widths[:len(leasts)]):
        kept_after = sum(cells + CELL_PADDING for cells in leasts[shown + 1:])
        cells = room - CELL_PADDING - kept_after
        widths.append(cells if most is None else min(most, cells))
        room -= widths[-1] + CELL_PADDING
    return widths


def cut_to_cells(text: str, width: int) -> str:
    """``text`` cut with "…" to ``width`` terminal cells, not characters: a wide character (CJK, most emoji) takes two,
    and a DataTable crops what is wider than its column without a mark. Cut by ``sanitize.cut`` (never inside an
    address's local part)."""
    if cell_len(text) <= width:
        return text
    chars = min(width, len(text))
    while chars > 1 and cell_len(cut(text, chars)) > width:
        chars -= 1
    return cut(text, chars)
