"""`ctxtop watch`: follow a log headless, one line per update and one per alert (JSON lines with --json)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import orjson

from ctxtop.context.audit.alerts import Alert
from ctxtop.context.output.redact import redact
from ctxtop.context.output.sanitize import one_line
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.follow import Update
from ctxtop.tui.tail import watch_log

# Also look without an event now and then: a deleted file, or a filesystem that drops events.
IDLE_CHECK_SECONDS = 1.0


def status(tracker: Tracker, update: Update | None) -> dict[str, Any]:
    with tracker.lock:
        session = tracker.session
        window = tracker.window_at(None)
        limit, _ = session.limit()
        reported = session.reported_at(None)
        used = reported if reported is not None else window.estimated_tokens
        return {
            "type": "update",
            "time": round(time.time(), 3),
            "messages": session.message_count,
            "new": update.new if update else 0,
            "reset": update.reset if update else None,
            "reported_tokens": reported,
            "estimated_tokens": window.estimated_tokens,
            "limit": limit,
            "percent": round(100 * used / limit, 1) if limit else None,
            "categories": {name: t.tokens for name, t in window.totals.items() if t.tokens},
        }


def alert_record(alert: Alert) -> dict[str, Any]:
    return {"type": "alert", "failing": alert.fails, **alert.as_dict()}


def _text(record: dict[str, Any]) -> str:
    if record["type"] == "alert":
        label = "ALERT" if record["failing"] else "note"
        return f"{label} message {record['message']}: {record['kind']} [{record['constraint'] or '-'}] {one_line(record['detail'], 200)}"
    percent = f" ({record['percent']}%)" if record["percent"] is not None else ""
    reported = f"{record['reported_tokens']:,}" if record["reported_tokens"] is not None else "—"
    parts = " ".join(f"{k} {v:,}" for k, v in record["categories"].items())
    reset = f" [{record['reset']}]" if record["reset"] else ""
    used = record["reported_tokens"] if record["reported_tokens"] is not None else record["estimated_tokens"]
    return (f"msg {record['messages']} +{record['new']}: {used:,} / {record['limit']:,}{percent} "
            f"reported {reported} estimated {record['estimated_tokens']:,} | {parts}{reset}")


def follow_headless(tracker: Tracker, *, as_json: bool, poll_seconds: float | None, out=None,
                    redacted: bool = False) -> int:
    """Print the current state, then every update and alert until Ctrl-C (0) or the file goes away (raises)."""
    out = out or sys.stdout

    def emit(record: dict[str, Any]) -> None:
        if redacted:
            record = redact(record)
        out.write((orjson.dumps(record).decode("utf-8") if as_json else _text(record)) + "\n")
        out.flush()

    changed = threading.Event()
    paths: set = set()
    paths_lock = threading.Lock()

    def notify(path) -> None:  # in the watcher's thread
        with paths_lock:
            paths.add(path)
        changed.set()

    assert tracker.follower is not None, "watch follows a tracker opened live"
    observer = watch_log(tracker.follower.file, notify, poll_seconds=poll_seconds)
    try:
        emit(status(tracker, None))
        for alert in tracker.new_alerts():
            emit(alert_record(alert))
        while True:
            changed.wait(IDLE_CHECK_SECONDS)
            changed.clear()
            with paths_lock:
                seen = set(paths)
                paths.clear()
            # Only the paths the watcher reported: an idle check costs a stat of the log, not a
            # listing of a folder that may hold thousands of other sessions' files.
            change = tracker.poll(seen)
            if change is None:
                continue
            emit(status(tracker, change.update))
            for alert in change.alerts:
                emit(alert_record(alert))
    except KeyboardInterrupt:
        return 0
    finally:
        observer.stop()
