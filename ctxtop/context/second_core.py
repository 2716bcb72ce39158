"""Half of a long job in a forked copy of the process, on the machine's second core.

For the commands that read a whole log once and exit: they run on one thread, and the
slowest of their work (the audit's reading of every window, rule detection over every text people
wrote) splits into two independent halves. The fork is made only where it is safe: a platform
that has one, and no other thread running (a fork copies the calling thread only, and a lock
another thread held stays held in the copy). Anything going wrong with it (not made, dying,
sending back something unreadable) costs time, not results: the second half then runs here.

A fork may also be started and its result taken later (``start_in_fork``): work on what a cold
read has reached so far, done while the read goes on (``audit.early``).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

First = TypeVar("First")
Second = TypeVar("Second")


def cores_available() -> int:
    """The cores this process may run on (its CPU affinity, where the platform says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


def both_halves(first: Callable[[], First], second: Callable[[], Second]) -> tuple[First, Second]:
    """``first()`` here and ``second()`` in a fork at the same time, when ``can_fork()``; else one after
    the other, here. ``second`` must not write anything the parent reads afterwards (its changes stay
    in the fork) and its result must pickle."""
    forked = start_in_fork(second)
    if forked is None:
        return first(), second()
    try:
        here = first()
    except BaseException:  # interrupted, or ``first`` failed: the fork goes too
        forked.cancel()
        raise
    sent = forked.result()
    return here, sent[0] if sent is not None else second()


class Forked(Generic[Second]):
    """A call running in a forked copy of the process: ``result`` waits for it and takes what it sent."""

    def __init__(self, pid: int, reader: int) -> None:
        self._pid, self._reader = pid, reader
        self._done = False

    def result(self) -> tuple[Second] | None:
        """``(value,)`` as the call returned it; None when the fork failed (died, or sent something
        unreadable): what it was for is then done here, or not at all. Waits for the fork; once only."""
        if self._done:
            return None
        reaped = False
        try:
            with open(self._reader, "rb", closefd=False) as incoming:
                payload = incoming.read()  # until the fork exits (the write end is its only copy)
            _, status = os.waitpid(self._pid, 0)
            reaped = True
        finally:
            self._finish(reaped)
        return _unpickled(payload) if os.waitstatus_to_exitcode(status) == 0 else None

    def has_sent(self) -> bool:
        """Whether the call has returned (what it sends can be read) or the fork is gone: ``result`` will not wait long."""
        if self._done:
            return False
        poller = select.poll()  # (not select(): no limit on the descriptor's number)
        poller.register(self._reader, select.POLLIN)
        return bool(poller.poll(0))

    def cancel(self) -> None:
        """Stop the fork and forget what it would have sent."""
        if not self._done:
            self._finish(reaped=False)

    def _finish(self, reaped: bool) -> None:
        self._done = True
        os.close(self._reader)
        if not reaped:
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)


def start_in_fork(call: Callable[[], Second]) -> Forked[Second] | None:
    """``call()`` started in a fork, when ``can_fork()``; None when no fork is made (the caller then
    does the work itself). ``call`` must not write anything the parent reads afterwards (its changes
    stay in the fork) and its result must pickle."""
    if not can_fork():
        return None
    reader, writer = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no memory or processes left for it
        os.close(reader)
        os.close(writer)
        return None
    if pid == 0:
        _the_fork(call, reader, writer)  # never returns
    os.close(writer)
    return Forked(pid, reader)


def _the_fork(second: Callable[[], Second], reader: int, writer: int) -> None:
    """The fork's whole life: run ``second``, write its result, exit without the parent's exit handlers
    or buffered output (both belong to the parent)."""
    code = 1
    try:
        os.close(reader)
        payload = pickle.dumps((second(),), protocol=pickle.HIGHEST_PROTOCOL)
        with open(writer, "wb", closefd=False) as outgoing:
            outgoing.write(payload)
        code = 0
    finally:
        os._exit(code)


def _unpickled(payload: bytes) -> tuple | None:
    try:
        sent = pickle.loads(payload)  # noqa: S301 (our own fork's output, through a pipe only it and we hold)
    except Exception:  # cut short: the fork died while writing
        return None
    return sent if isinstance(sent, tuple) and len(sent) == 1 else None
