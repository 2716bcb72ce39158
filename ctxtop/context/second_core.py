"""Half of a long job in a forked copy of the process, on the machine's second core.

For the commands that read a whole log once and exit: they run on one thread, and the
slowest of their work (the audit's reading of every window, rule detection over every text people
wrote) splits into two independent halves. The fork is made only where it is safe: a platform
that has one, and no other thread running (a fork copies the calling thread only, and a lock
another thread held stays held in the copy). Anything going wrong with it (not made, dying,
sending back something unreadable) costs time, not results: the second half then runs here.

A fork may also be started and its result taken later (``start_in_fork``): work on what a cold
read has reached so far, done while the read goes on (``audit.early``). Such a fork may also post one
value before it is done (``Posted``), for the parent to take without waiting.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import pickle
import select
import signal
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

First = TypeVar("First")
Second = TypeVar("Second")
Value = TypeVar("Value")


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
        """Whether the call has returned (what it sends can be read) or the fork is gone: ``result`` will not wait
        long. False once ``result`` or ``cancel`` was called: nothing more will come."""
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


class Posted(Generic[Value]):
    """One value a fork posts for its parent to read at any time after, without waiting for the fork.

    Made before the fork: pages shared by both (anonymous, so only those written take memory). The fork
    writes the value pickled, then its length and digest; the parent takes it only when the digest
    matches what it reads, so a value read while it is being written is not taken (None: not posted yet).
    """

    _HEADER = 8 + 16  # the payload's length, its digest

    def __init__(self, capacity: int = 4 << 20) -> None:
        self._area = mmap.mmap(-1, self._HEADER + capacity)

    def post(self, value: Value) -> bool:
        """In the fork: ``value`` posted, unless it does not fit (then the parent never reads one)."""
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if self._HEADER + len(payload) > len(self._area):
            return False
        self._area[self._HEADER : self._HEADER + len(payload)] = payload
        self._area[:self._HEADER] = len(payload).to_bytes(8, "little") + _digest(payload)
        return True

    def read(self) -> Value | None:
        """In the parent: the value posted, or None (not posted, or not yet whole)."""
        header = self._area[:self._HEADER]
        size = int.from_bytes(header[:8], "little")
        if not size or self._HEADER + size > len(self._area):
            return None
        payload = self._area[self._HEADER : self._HEADER + size]
        if _digest(payload) != header[8:]:
            return None
        try:
            return pickle.loads(payload)  # noqa: S301 (our own fork's, in pages only it and we map)
        except Exception:
            return None

    def close(self) -> None:
        self._area.close()


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=16).digest()
