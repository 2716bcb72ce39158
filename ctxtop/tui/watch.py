"""`ctxtop watch`: follow a log headless, one line per update and one per alert (JSON lines with --json)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxtop.context.audit.alerts import Alert
from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.marks import limit_mark, use_mark
from ctxtop.context.output.redact import redact
from ctxtop.context.output.snapshot import split_unexplained, window_use
from ctxtop.context.sanitize import one_line, shown_name
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.follow import Update
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.tail_first import tail_session
from ctxtop.tui.discover import SESSION_SUFFIXES, may_be_session
from ctxtop.tui.errors import USER_ERRORS, say
from ctxtop.tui.tail import IDLE_CHECK_SECONDS, LogWatch, watch_new_sessions
from ctxtop.tui.waiting import not_written_yet

# From this size on, watch's first line comes from the window after the last compaction, before the
# history is read: lower than the TUI's first paint (which shows a screen meanwhile), since watch
# prints nothing at all until its tracker is open, rules and audit included (5 s for a 30 MB rollout).
WATCH_TAIL_BYTES = 4 << 20


def status(tracker: Tracker, update: Update | None) -> dict[str, Any]:
    with tracker.lock:
        return status_of(tracker.session, tracker.window_at(None), update)


def status_of(session: Session, window: Window, update: Update | None, *, from_tail: bool = False) -> dict[str, Any]:
    """An update record. ``from_tail``: the session holds only what follows the log's last compaction
    (the first line of a big log, before its history is read): ``messages`` counts those alone."""
    limit, limit_source = session.limit()
    reported = session.reported_at(None)
    used = window_use(window, reported)
    inferred, unattributed = split_unexplained(window, reported)
    record = {
        "type": "update",
        "time": round(time.time(), 3),
        "messages": session.message_count,
        "new": update.new if update else 0,
        "reset": update.reset if update else None,
        "reported_tokens": reported,
        "estimated_tokens": window.estimated_tokens,
        "used_tokens": used,  # reported_tokens, else estimated_tokens and the inferred system prompt and tools
        "limit": limit,
        "limit_source": limit_source,  # as in export: "default" is a guess
        "percent": round(100 * used / limit, 1) if limit else None,
        "counts_estimated": session.window_rough(window),  # a first line from a big tail (tail_first); else exact
        "categories": {name: t.tokens for name, t in window.totals.items() if t.tokens},
        # Estimates, not counts: the system prompt and tools inferred from a model call, and the rest.
        "inferred_system_tools": inferred,
        "unattributed": unattributed,
    }
    if from_tail:
        record["from_tail"] = True
    return record


def print_record(record: dict[str, Any], *, as_json: bool, redacted: bool, out=None) -> None:
    out = out or sys.stdout
    if redacted:
        record = redact(record)
    out.write(json_document(record, indent=False) if as_json else one_line(_text(record)) + "\n")
    out.flush()


def first_line_from_the_tail(path: str, *, encoding: str, window: int | None, as_json: bool, redacted: bool) -> None:
    """On a big log, print the window after its last compaction at once, before the whole history is read."""
    try:
        quick = tail_session(path, encoding=encoding, window=window, min_bytes=WATCH_TAIL_BYTES)
    except (OSError, *USER_ERRORS):
        return  # the full open says what is wrong
    if quick is not None:
        print_record(status_of(quick, quick.window_at(None, exact=False), None, from_tail=True), as_json=as_json, redacted=redacted)


def session_record(path: str | None) -> dict[str, Any]:
    """``{"type": "session"}``: the session the records after it are of (``watch DIR --json``: the first one it opens,
    then each newer one it follows)."""
    return {"type": "session", "time": round(time.time(), 3), "path": shown_name(path) if path is not None else None}


def alert_record(alert: Alert) -> dict[str, Any]:
    return {"type": "alert", "failing": alert.fails, **alert.as_dict()}


def _text(record: dict[str, Any]) -> str:
    if record["type"] == "alert":
        label = "ALERT" if record["failing"] else "note"
        return f"{label} message {record['message']}: {record['kind']} [{record['constraint'] or '-'}] {one_line(record['detail'], 200)}"
    percent = f" ({record['percent']}%)" if record["percent"] is not None else ""
    reported = f"{record['reported_tokens']:,}" if record["reported_tokens"] is not None else "—"
    approx = "≈" if record.get("counts_estimated") else ""
    parts = " ".join(f"{k} {approx}{v:,}" for k, v in record["categories"].items())
    if record["inferred_system_tools"]:
        parts += f" ≈inferred-sys+tools {record['inferred_system_tools']:,}"
    if record["unattributed"]:
        parts += f" ≈unattributed {record['unattributed']:,}"
    reset = f" [{record['reset']}]" if record["reset"] else ""
    if record.get("from_tail"):
        reset += " [since the last compaction; reading the history…]"
    used = f"{use_mark(record)}{record['used_tokens']:,}"
    limit = f"{limit_mark(record)}{record['limit']:,}"
    return (f"msg {record['messages']} +{record['new']}: {used} / {limit}{percent} "
            f"reported {reported} estimated {approx}{record['estimated_tokens']:,} | {parts}{reset}")


@dataclass(slots=True)
class SessionFolder:
    """``watch DIR``: the folder whose newer sessions are followed in turn (unless ``stay``), and how to
    open one as the first was opened."""

    directory: Path
    stay: bool
    open: Callable[[str], Tracker]


def follow_headless(tracker: Tracker, *, as_json: bool, poll_seconds: float | None, out=None,
                    redacted: bool = False, folder: SessionFolder | None = None) -> int:
    """Print the current state, then every update and alert until Ctrl-C (0) or the file goes away (raises).

    An update that changes nothing shown (a record the model is not sent, half a line) prints nothing.
    With ``folder``, a newer session appearing there is followed instead, as the TUI does."""
    last_shown: dict[str, Any] | None = None

    def emit(record: dict[str, Any]) -> None:
        print_record(record, as_json=as_json, redacted=redacted, out=out)

    def emit_status(change: Update | None) -> None:
        nonlocal last_shown
        record = status(tracker, change)
        # What the session shows; "new" and "reset" say what this update did, and print with it only.
        shown = {key: value for key, value in record.items() if key not in ("time", "new", "reset")}
        if shown != last_shown or (change is not None and (change.new or change.reset)):
            last_shown = shown
            emit(record)

    changed = threading.Event()
    paths: set = set()
    appeared: list[Path] = []
    paths_lock = threading.Lock()

    def notify(path) -> None:  # in the watcher's thread
        with paths_lock:
            paths.add(path)
        changed.set()

    def new_session(path: Path) -> None:  # in the folder watcher's thread
        with paths_lock:
            appeared.append(path)
        changed.set()

    assert tracker.follower is not None, "watch follows a tracker opened live"
    observer = LogWatch(tracker.follower.file, notify, poll_seconds=poll_seconds)
    sessions = watch_new_sessions([folder.directory], new_session, SESSION_SUFFIXES, poll_seconds=poll_seconds) if folder else None
    try:
        emit_status(None)
        for alert in tracker.new_alerts():
            emit(alert_record(alert))
        while True:
            changed.wait(IDLE_CHECK_SECONDS)
            changed.clear()
            observer.renew_if_replaced()
            with paths_lock:
                seen, newer = set(paths), list(appeared)
                paths.clear()
                appeared.clear()
            if folder is not None and newer:
                switched, waiting = _newer_session(folder, tracker, newer)
                with paths_lock:
                    appeared.extend(waiting)  # created, not written yet: looked at again at the next check
                if switched is not None:
                    observer.stop()
                    tracker = switched
                    assert tracker.follower is not None
                    observer = LogWatch(tracker.follower.file, notify, poll_seconds=poll_seconds)
                    if as_json:
                        emit(session_record(tracker.session.path))
                    last_shown = None
                    emit_status(None)
                    for alert in tracker.new_alerts():
                        emit(alert_record(alert))
                    continue
            # Only the paths the watcher reported: an idle check costs a stat of the log, not a
            # listing of a folder that may hold thousands of other sessions' files.
            change = tracker.poll(seen)
            if change is None:
                continue
            emit_status(change.update)
            for alert in change.alerts:
                emit(alert_record(alert))
    except KeyboardInterrupt:
        return 0
    finally:
        observer.stop()
        if sessions is not None:
            sessions.stop()


def _newer_session(folder: SessionFolder, tracker: Tracker, appeared: list[Path]) -> tuple[Tracker | None, list[Path]]:
    """The newer session to follow among the files that ``appeared`` (opened), if any; and those still
    to be written, to look at again."""
    current = Path(tracker.follower.file if tracker.follower is not None else tracker.session.path or "").resolve()
    candidates: list[tuple[float, Path]] = []
    for path in dict.fromkeys(appeared):
        try:
            if path.is_file() and path.resolve() != current:
                candidates.append((path.stat().st_mtime, path))
        except (OSError, RuntimeError):  # gone again, or a symlink loop (RuntimeError before Python 3.13)
            continue
    waiting = [path for _, path in candidates if not_written_yet(path)]
    # (a file that is no session, read whole — a settings .json — is not one to switch to)
    ready = [(mtime, path) for mtime, path in candidates if path not in waiting and may_be_session(path)]
    if not ready:
        return None, waiting
    newest = max(ready, key=lambda item: item[0])[1]
    name = one_line(newest.name, 80)
    if folder.stay:
        say(f"ctxtop: a newer session appeared: {name} (staying, as --stay asks)")
        return None, []
    try:
        switched = folder.open(str(newest))
    except (OSError, *USER_ERRORS) as exc:
        say(f"ctxtop: a newer session appeared, {name}, and cannot be read ({one_line(str(exc), 200)}): staying")
        return None, []
    say(f"ctxtop: switched to the newer session {name}")
    return switched, []
