"""Half a job in a fork: its result comes back, and whatever happens to the fork, the job's result is whole."""

from __future__ import annotations

import os
import threading
import time

import pytest

from ctxtop.context import second_core
from ctxtop.context.second_core import both_halves

from ..conftest import reaped

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform: both halves run here")


def test_the_second_half_runs_in_a_fork_and_its_result_comes_back(forks):
    here = os.getpid()
    first, second = both_halves(lambda: ("first", os.getpid()), lambda: ("second", os.getpid(), list(range(100_000))))
    assert first == ("first", here)
    assert second[0] == "second" and second[1] != here and second[2] == list(range(100_000))  # (bigger than a pipe's buffer)
    assert len(forks) == 1 and reaped(forks[0])


def test_what_the_fork_changes_stays_in_the_fork(forks):
    state = {"n": 0}

    def second():
        state["n"] += 1
        return state["n"]

    assert both_halves(lambda: state["n"], second) == (0, 1)
    assert state == {"n": 0}


@pytest.mark.parametrize("failure", ["dies", "cannot pickle", "raises"])
def test_a_fork_that_fails_costs_time_not_results(forks, failure):
    here = os.getpid()

    def second():
        if os.getpid() != here:  # only in the fork: run here, it does its work
            if failure == "dies":
                os._exit(3)
            if failure == "cannot pickle":
                return lambda: None
            raise RuntimeError("the fork's half failed")
        return ("second", os.getpid())

    assert both_halves(lambda: "first", second) == ("first", ("second", here))
    assert len(forks) == 1 and reaped(forks[0])


def test_the_fork_is_ended_when_the_first_half_fails(forks):
    def first():
        raise KeyError("first")

    with pytest.raises(KeyError):
        both_halves(first, lambda: threading.Event().wait(60))  # a fork that would wait a minute
    assert len(forks) == 1 and reaped(forks[0])


def test_no_fork_while_another_thread_runs():
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not second_core.can_fork()
    finally:
        release.set()
        other.join()


def test_without_a_fork_both_halves_run_here(forks, monkeypatch):
    monkeypatch.setattr(second_core, "can_fork", lambda: False)
    assert both_halves(lambda: os.getpid(), lambda: os.getpid()) == (os.getpid(), os.getpid())
    assert forks == []


def test_whether_a_fork_has_sent_is_known_without_waiting(forks, tmp_path):
    go = tmp_path / "go"

    def call():
        while not go.exists():
            time.sleep(0.01)
        return "sent"

    forked = second_core.start_in_fork(call)
    assert forked is not None and not forked.has_sent()
    go.touch()
    while not forked.has_sent():
        time.sleep(0.01)
    assert forked.result() == ("sent",)
    assert not forked.has_sent()  # (taken: nothing more to come)


def test_a_value_posted_by_a_fork_is_read_without_waiting_for_it(forks, tmp_path):
    go = tmp_path / "go"
    posted = second_core.Posted[dict]()

    def call():
        posted.post({"rules": list(range(10_000))})
        while not go.exists():
            time.sleep(0.01)
        return "done"

    forked = second_core.start_in_fork(call)
    assert forked is not None
    while (value := posted.read()) is None:
        time.sleep(0.01)
    assert value == {"rules": list(range(10_000))} and not forked.has_sent()  # read while the fork still works
    go.touch()
    assert forked.result() == ("done",)
    posted.close()


def test_a_posted_value_is_read_whole_or_not_at_all():
    posted = second_core.Posted[bytes](capacity=1 << 10)
    assert posted.read() is None  # nothing posted yet
    assert not posted.post(b"x" * 2000) and posted.read() is None  # does not fit: never read
    assert posted.post(b"y" * 100) and posted.read() == b"y" * 100
    posted._area[30] ^= 0xFF  # a byte of the payload not yet written, as the reader may see it
    assert posted.read() is None
    posted.close()
