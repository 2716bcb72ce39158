"""Start before the agent writes: a log that does not exist yet, or is still empty, is waited for.

A missing or empty file is what a session looks like in its first moments, so
the TUI and ``watch`` wait for its first bytes instead of refusing it. Anything
else that cannot be read (a directory, a FIFO, no permission) is still an error.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

# How often a file still to be written is looked at.
WAIT_POLL_SECONDS = 0.25


def not_written_yet(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a log still to be written: missing, or an empty regular file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # unreadable: the caller's open says why
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def wait_for_log(path: str | os.PathLike, *, every: float | None = None, cancelled: Callable[[], bool] = lambda: False) -> bool:
    """Return once ``path`` has bytes (True), or when ``cancelled()`` says to stop (False)."""
    while not_written_yet(Path(path)):
        if cancelled():
            return False
        time.sleep(every or WAIT_POLL_SECONDS)
    return True
