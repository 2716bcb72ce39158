"""Which sessions a run audits: files, folders searched for every log format ctxtop reads, or URLs.

A folder is searched recursively (through links to folders, each real folder once). A folder that
is itself one session (a Cline task, an OpenHands event directory, an opencode storage tree) is one
session; otherwise every file that may be a log
(``*.jsonl``, ``*.json``, ``*.traj``, ``*.eval``, ``opencode.db``) is a candidate — what turns out not
to be one is skipped with its reason. Sub-agent transcripts (``agent-*.jsonl``) belong to their
session and are not audited on their own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.context.fleet.session import skip_reason
from ctxtop.tui.commands.fleet.storage import Listing, filesystem, fingerprint, is_url, local_path
from ctxtop.tui.discover import SESSION_SUFFIXES

DATABASES = ("opencode.db",)
OPENHANDS_EVENTS = "events"


@dataclass(frozen=True, slots=True)
class Found:
    name: str  # path or URL
    url: bool = False
    fingerprint: str | None = None  # for a URL: what the store says identifies the content
    problem: str | None = None  # why it cannot be audited (then it is skipped)
    named: bool = False  # a PATH as given, with a problem: it does not exist or cannot be listed (the run fails)


def is_candidate(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    if base.startswith("agent-") or base.endswith(".meta.json"):
        return False  # a sub-agent's transcript, or its description: part of the session beside it
    return base.endswith(SESSION_SUFFIXES) or base in DATABASES


def find_sessions(paths: list[str], options: Mapping[str, Any]) -> Iterator[Found]:
    for given in paths:
        if is_url(given):
            yield from _remote(given, options)
        else:
            yield from _local(Path(local_path(given)))


def _local(path: Path) -> Iterator[Found]:
    if not path.exists():
        yield Found(str(path), problem="no such file or folder", named=True)
    elif path.is_file():
        yield Found(str(path))
    elif not path.is_dir():
        yield Found(str(path), problem="not a regular file")  # a FIFO would block the read for ever
    elif _is_session_folder(path, os.listdir(path)):
        yield Found(str(path))
    else:
        yield from _search(path)


def _search(folder: Path) -> Iterator[Found]:
    # Links to folders are followed, as links to logs are; each real folder is searched once (a link back up ends there).
    searched = {os.path.realpath(folder)}
    for directory, folders, files in os.walk(folder, onerror=None, followlinks=True):
        here = Path(directory)
        folders[:] = sorted(f for f in folders if _first_time(here / f, searched))
        session_folders = [f for f in folders if _is_session_folder(here / f, None)]
        folders[:] = [f for f in folders if f not in session_folders]
        for name in session_folders:
            yield Found(str(here / name))
        for name in sorted(files):
            if not is_candidate(name):
                continue
            if (here / name).is_file():
                yield Found(str(here / name))
            elif _dangling(here / name):  # a log gone, not left out unsaid (a FIFO, never a log, is)
                yield Found(str(here / name), problem=DANGLING)


DANGLING = "a link to no file (its target is gone, or links back to it)"


def _dangling(path: Path) -> bool:
    return path.is_symlink() and not path.exists()


def _first_time(folder: Path, searched: set[str]) -> bool:
    real = os.path.realpath(folder)
    if real in searched:
        return False
    searched.add(real)
    return True


def _is_session_folder(path: Path, names: list[str] | None) -> bool:
    """A Cline / Roo task, an OpenHands event directory or an opencode storage tree (told by names only)."""
    try:
        names = os.listdir(path) if names is None else names
        if "api_conversation_history.json" in names:
            return True
        if "session" in names and "message" in names and (path / "session").is_dir():
            return True
        if OPENHANDS_EVENTS in names and (path / OPENHANDS_EVENTS).is_dir():
            with os.scandir(path / OPENHANDS_EVENTS) as entries:
                for entry, _ in zip(entries, range(20)):
                    stem = entry.name.removesuffix(".json")
                    if entry.name.endswith(".json") and (stem.isdigit() or stem.startswith("event-")):
                        return True
    except OSError:
        return False
    return False


def _remote(url: str, options: Mapping[str, Any]) -> Iterator[Found]:
    fs, inside = filesystem(url, options)
    protocol = url.split("://", 1)[0]
    listing: Listing | None = None
    try:
        if fs.isdir(inside):
            # With what the store says of each object: a session's fingerprint needs its sub-agents' too, and one
            # listing gives them all (not a request per object).
            listing = Listing(fs.find(inside, detail=True))  # (sorted once: each session's sub-agents by bisection)
            names = sorted(name for name in listing if is_candidate(name))
        else:
            names = [inside]
    except Exception as exc:  # noqa: BLE001 - credentials, a missing bucket…: one line, the run goes on
        yield Found(url, url=True, problem=skip_reason(f"cannot list it: {type(exc).__name__}: {exc}"), named=True)
        return
    for name in names:
        shown = f"{protocol}://{name}"
        try:
            yield Found(shown, url=True, fingerprint=fingerprint(fs, name, listing))
        except FileNotFoundError:
            # The URL given names neither a prefix nor an object: as a local PATH that does not exist, the run fails.
            yield Found(shown, url=True, problem="no such object (nor a prefix holding any)", named=listing is None)
        except Exception as exc:  # noqa: BLE001
            yield Found(shown, url=True, problem=skip_reason(f"cannot read it: {type(exc).__name__}: {exc}"))
