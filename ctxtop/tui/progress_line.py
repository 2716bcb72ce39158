"""A line on stderr that says how far a long read has come, for the commands that print only at the end.

A cold ``export`` or ``check`` of a log of a gigabyte reads for half a minute; without a word, it looks
hung. The line is for a person: it is drawn only when stderr is a terminal (a pipe, a file or a CI log
gets none of it), only once the work has taken ``SHOW_AFTER`` seconds (a small log prints nothing), at
most every ``REDRAW_EVERY`` seconds, cut to the terminal's width (a line that wrapped could not be
drawn over), and wiped when the work ends or fails: what the command prints next, its output or its
one-line error, starts on a clean line.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from ctxtop.context.sanitize import one_line

SHOW_AFTER = 0.5
REDRAW_EVERY = 0.1
TEXT_LEAST = 12  # cells of ``text`` kept before its ``tail`` is cut too ("ctxtop: rea…")
ROOM = 3  # cells left free at the end of the line: the last column, and the terminal's echo of Ctrl-C ("^C")
_BACK_AND_ERASE = "\r\x1b[K"  # to the start of the line, then erase it: ctxtop's own control sequence


class ProgressLine:
    """``show(text)`` as often as wanted; used as a context manager, it wipes itself at the end."""

    def __init__(self, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._clock = clock
        self._started = clock()
        self._drawn_at: float | None = None  # when the line was last drawn (None: nothing on screen)
        try:
            self._enabled = self._stream.isatty()
        except (AttributeError, ValueError, OSError):  # (a closed or odd stream: no line)
            self._enabled = False

    def show(self, text: str, *, now: bool = False, tail: str = "") -> None:
        """Draw ``text`` then ``tail`` (cleaned of control sequences: they name a log) over the line before, when
        due; ``now``: without waiting for the next redraw (a stage ends, and the next may be long). Where the line
        does not fit, ``text`` is cut before ``tail`` is ("reading rollout-2026-02-23T12…4079fe.jsonl" still
        ends with its "45%"), unless even ``tail`` does not fit with a few cells of ``text``."""
        if not self._enabled:
            return
        at = self._clock()
        if at - self._started < SHOW_AFTER or (not now and self._drawn_at is not None and at - self._drawn_at < REDRAW_EVERY):
            return
        # Three cells short of the width: a line that fills the last column wraps on some terminals, and Ctrl-C
        # makes the terminal echo "^C" after the line (a wrapped "C" left the line's row on screen, unwiped).
        width = max(2, self._columns() - ROOM)
        from rich.cells import cell_len  # (here: a command that draws no line does not load them)

        from ctxtop.tui.widgets.cells import cut_to_cells

        line, end = one_line(text), one_line(tail)
        if tail[:1].isspace():
            end = " " + end  # (the space between them)
        if cell_len(line) + cell_len(end) > width:
            room = width - cell_len(end)
            if room >= TEXT_LEAST:
                line = cut_to_cells(line, room)
            else:
                line, end = cut_to_cells(line + end, width), ""
        line += end
        self._write(_BACK_AND_ERASE + line)
        self._drawn_at = at

    def _columns(self) -> int:
        """The width of the terminal the line is drawn on: the stream's own, not stdout's (which
        ``shutil.get_terminal_size`` asks, and which is a pipe in ``ctxtop export … | jq``: 80 columns
        then, and on a narrower terminal the line wrapped and its first row stayed on screen)."""
        try:
            columns = os.get_terminal_size(self._stream.fileno()).columns
        except (AttributeError, ValueError, OSError):  # (not a real terminal's stream: the usual guess)
            columns = 0
        return columns if columns > 0 else shutil.get_terminal_size().columns  # (0: a terminal that does not say)

    def clear(self) -> None:
        """Wipe the line, if one is drawn."""
        if self._drawn_at is not None:
            self._write(_BACK_AND_ERASE)
            self._drawn_at = None

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            self._enabled = False  # (stderr gone: the work goes on, silent)

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.clear()

