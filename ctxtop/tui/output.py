"""Writing command output: stdout, or a file replaced atomically."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ctxtop.tui.errors import UsageError


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to stdout, or atomically to ``path`` (no half-written file on failure)."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
