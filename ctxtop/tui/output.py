"""Writing command output: stdout, or a file.

A regular file (or a new one) is replaced atomically: no half-written file on failure, with the
mode the user's umask gives new files (or the mode of the file it replaces). Anything else the
path names — a FIFO, a terminal, ``/dev/null``, a symlink to one of them — is written through,
never replaced: replacing ``/dev/null`` with a regular file (as root) breaks the machine.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

from ctxtop.context.sanitize import clean_text
from ctxtop.context.store.source import split_sample
from ctxtop.tui.errors import UsageError


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to stdout, or to ``path`` (see the module's docstring).

    Whatever the format, no control sequence is written: the last line of defence for log text
    that a renderer forgot to clean (JSON output has its controls escaped already, so this leaves
    it as it is)."""
    text = clean_text(text)
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    data = text.encode("utf-8", "replace")  # a lone surrogate is no reason to lose the output
    try:
        try:
            existing = os.stat(path)  # (through symlinks: /dev/stdout is one to a pipe, whose real path opens nothing)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            _write_through(Path(path), data)
        else:  # a symlink's target is replaced, the link kept
            _replace_atomically(Path(os.path.realpath(path)), data, stat.S_IMODE(existing.st_mode) if existing else _new_file_mode())
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def refuse_writing_over(path: str | None, logs: list[str]) -> None:
    """Raise UsageError when ``path`` (an ``--output``) names one of ``logs``, a file inside one that is a folder, a
    file in the folder a log keeps beside it (Claude Code's ``<session>/subagents/``), or any other file that is a
    session log (a sub-agent's parent, a sibling): ctxtop never writes over a log."""
    if path is None or path == "-":
        return
    target = os.path.realpath(path)
    for log in logs:
        source = os.path.realpath(split_sample(log)[0])
        kept_beside = os.path.splitext(source)[0]
        inside = any(target.startswith(folder + os.sep) for folder in (source, kept_beside))
        if target == source or _same_file(target, source):
            raise UsageError(f"--output {path} would write over the log being read ({log}): choose another file")
        if inside:
            raise UsageError(f"--output {path} would write into the log being read or the folder beside it ({log}): choose another place")
    if _is_a_log(target):
        raise UsageError(f"--output {path} is a session log: ctxtop never writes over one (choose another file)")


def _is_a_log(path: str) -> bool:
    """Whether ``path`` is a session log, or part of one: a regular file whose first megabyte is a log format ctxtop
    reads (a JSON document log tells its format only some way in), or a file in a folder ctxtop reads as a session
    (an OpenHands event, a Cline task's history)."""
    from ctxtop.tui.discover import head_is_a_log, is_session_folder  # (discover imports much of the rest of the TUI)

    parent = Path(path).parent
    # A Cline task's file is in the task's folder; an OpenHands event in its conversation's events/.
    if is_session_folder(parent) or (parent.name == "events" and is_session_folder(parent.parent)):
        return True
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
    except OSError:  # none there
        return False
    return head_is_a_log(path)


def _same_file(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)  # a hard link
    except OSError:
        return False


def _write_through(target: Path, data: bytes) -> None:
    if stat.S_ISDIR(target.stat().st_mode):
        raise IsADirectoryError(21, "is a directory")
    fd = os.open(target, os.O_WRONLY | os.O_NOCTTY)  # a FIFO waits here for its reader, as `>` does
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _replace_atomically(target: Path, data: bytes, mode: int) -> None:
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)  # mkstemp makes 0600; an export is an ordinary file of the user's
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _new_file_mode() -> int:
    """0666 less the umask, as ``open(path, "w")`` would create the file."""
    return 0o666 & ~_umask()


def _umask() -> int:
    # Read, not set and reset: os.umask() changes it for every thread for a moment (the TUI exports in one).
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
