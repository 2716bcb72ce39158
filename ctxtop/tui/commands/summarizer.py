"""Running a user's summarizer command: the transcript on stdin, the summary from stdout.

Without ``shell`` the command line is split like a shell would (``shlex``) and run directly,
so nothing in it is interpreted; with it, ``/bin/sh -c`` runs it as written. The command
runs in its own process group, killed whole when it exceeds its time or its output size.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading

from ctxtop.context.sanitize import one_line
from ctxtop.tui.errors import UsageError

DEFAULT_TIMEOUT = 120.0  # seconds
DEFAULT_MAX_BYTES = 1 << 20  # of summary on stdout
STDERR_TAIL = 2000


class SummarizerError(UsageError):
    """The summarizer could not be run, failed, took too long or wrote too much."""


def run_summarizer(command: str, payload: bytes, *, shell: bool = False, timeout: float = DEFAULT_TIMEOUT,
                   max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    try:
        argv: str | list[str] = command if shell else shlex.split(command)
    except ValueError as exc:
        raise SummarizerError(f"cannot split the summarizer command {command!r}: {exc}") from None
    if not argv:
        raise SummarizerError("the summarizer command is empty")
    try:
        process = subprocess.Popen(argv, shell=shell, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
    except OSError as exc:
        raise SummarizerError(f"cannot run the summarizer {command!r}: {exc.strerror or exc}") from None
    output, errors = bytearray(), bytearray()
    too_big = threading.Event()

    def feed() -> None:
        try:
            process.stdin.write(payload)  # type: ignore[union-attr]
        except OSError:
            pass  # it stopped reading: its exit status says whether that is a failure
        finally:
            try:
                process.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass

    def drain() -> None:
        # (read1: what has come so far, not a wait for 64 KB that a child still holding the pipe may never write)
        while chunk := process.stdout.read1(1 << 16):  # type: ignore[union-attr]
            output.extend(chunk)
            if len(output) > max_bytes:
                too_big.set()
                _kill(process)
                return

    def drain_errors() -> None:
        while chunk := process.stderr.read1(1 << 14):  # type: ignore[union-attr]
            errors.extend(chunk)
            del errors[:-STDERR_TAIL]

    workers = [threading.Thread(target=job, daemon=True) for job in (feed, drain, drain_errors)]
    for worker in workers:
        worker.start()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        _kill(process)
        process.wait()
        raise SummarizerError(f"the summarizer took longer than {timeout:g} s (--summarizer-timeout)") from None
    finally:
        # What it started and left running (`sleep 1000 &`) goes with it: it would hold the pipes open, and live on.
        _kill(process)
        for worker in workers:
            worker.join(5)
    if too_big.is_set():
        raise SummarizerError(f"the summarizer wrote more than {max_bytes:,} bytes (--summarizer-max-bytes)")
    if process.returncode != 0:
        detail = one_line(errors.decode("utf-8", "replace"), 200)
        raise SummarizerError(f"the summarizer exited with status {process.returncode}" + (f": {detail}" if detail else ""))
    summary = output.decode("utf-8", "replace").strip()
    if not summary:
        raise SummarizerError("the summarizer printed no summary")
    return summary


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # its own group: a shell's children go too
    except (ProcessLookupError, PermissionError):
        pass
