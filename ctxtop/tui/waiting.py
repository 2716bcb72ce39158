"""Start before the agent writes: a log that does not exist yet, or is still empty, is waited for.

A missing or empty file, or one holding half its first line (or half a JSON document), is what a session
looks like in its first moments, so the TUI and ``watch`` wait for its first
line instead of refusing it. Anything
else that cannot be read (a directory, a FIFO, no permission) is still an error.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from ctxtop.tui.discover import is_session_folder, newest_session

# How often a file still to be written is looked at.
WAIT_POLL_SECONDS = 0.25
# A file this size or smaller with no newline and no whole JSON document is a first line still being
# written; a bigger one is opened as it is (and its open says what is wrong with it).
FIRST_LINE_BYTES = 1 << 20


def not_written_yet(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a log still to be written: missing, an empty regular file, or one holding only
    the start of its first line (an agent's first write may come in two: nothing to tell its format by yet)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # unreadable: the caller's open says why
    if not stat.S_ISREG(info.st_mode):
        return False
    return info.st_size == 0 or (info.st_size <= FIRST_LINE_BYTES and _first_line_unfinished(path))


def _first_line_unfinished(path: str | os.PathLike) -> bool:
    """The start of a JSON value with no newline yet, or a JSON document cut short, and not a whole document
    (which may well end without a newline). Anything else (NUL bytes, text) is no log being written: its open
    says so."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(FIRST_LINE_BYTES + 1)
    except OSError:
        return False
    if not data.strip():
        return True
    if data.lstrip()[:1] not in (b"{", b"[") or b"\0" in data:
        return False  # (JSON text never holds a NUL byte)
    # (A character cut in two at the end is part of what is still to come: not the text's error.)
    text = data.decode("utf-8", "ignore")
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as error:
        # Past its first newline, only a JSON document that stops before its end is still being written
        # (Gemini CLI's indented chat, caught half written); a JSON Lines log has a first line to read.
        return b"\n" not in data or error.pos >= len(text.rstrip())
    return False


def wait_for_session(path: str | os.PathLike, *, every: float | None = None, cancelled: Callable[[], bool] = lambda: False
                     ) -> Path | None:
    """The log to follow at ``path`` once there is one: ``path`` itself when it is (or becomes) a file
    with its first line, else the newest session in the folder it is (or becomes). None when
    ``cancelled()`` says to stop. A folder that is itself one session is returned as it is."""
    given = Path(path)
    while True:
        if given.is_dir():
            found = given if is_session_folder(given) else newest_session(given)
            if found is not None and (found.is_dir() or not not_written_yet(found)):
                return found
        elif not not_written_yet(given):
            return given
        if cancelled():
            return None
        time.sleep(every or WAIT_POLL_SECONDS)
