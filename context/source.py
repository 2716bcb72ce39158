"""Opening a log for reading: read-only, regular files only, errors as one line."""

from __future__ import annotations

import mmap
import os
import stat
from pathlib import Path

Buffer = bytes | mmap.mmap


class SourceError(ValueError):
    """The log cannot be read; the message is one line, fit for the user."""


def read_log(path: str | os.PathLike) -> Buffer:
    """The bytes of a log, memory-mapped read-only (never opened for writing)."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except PermissionError:
        raise SourceError(f"{path}: permission denied") from None
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SourceError(f"{path}: is a directory, not a session file")
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"{path}: not a regular file (a FIFO, socket or device cannot be read as a log)")
    if info.st_size == 0:
        raise SourceError(f"{path}: the file is empty")
    try:
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except PermissionError:
        raise SourceError(f"{path}: permission denied") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"{path}: cannot be read ({exc})") from None
