"""The TUI's `e`: the snapshot at the cursor as JSON and Markdown, an SVG of the screen and the HTML report."""

from __future__ import annotations

import re
from pathlib import Path

from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.redact import redact
from ctxtop.context.store.source import split_sample
from ctxtop.context.store.token_cache import cache_dir
from ctxtop.context.tracker import Tracker
from ctxtop.tui.errors import UsageError
from ctxtop.tui.output import write_output


def export_directory(preferred: Path, logs: list[str], followed: list[Path]) -> Path:
    """Where ``e`` writes: ``preferred`` (the current directory), unless that is beside one of ``logs`` (their
    folder, a folder session itself, Claude Code's ``<session>/`` kept beside one) or inside a folder ``followed``
    for newer sessions: ctxtop never writes beside a log. Then ``exports/`` in ctxtop's cache directory."""
    here = preferred.resolve()
    folders = [folder.resolve() for folder in followed]
    for log in logs:
        source = Path(split_sample(log)[0]).resolve()
        folders += [source.parent, source, source.with_suffix("")]
    if any(here == folder or folder in here.parents for folder in folders):
        return cache_dir() / "exports"
    return preferred


def export_snapshot(tracker: Tracker, at: int, svg: str, directory: Path, *, redacting: bool = False) -> list[Path]:
    """Write ``ctxtop-<session>-m<at>.{json,md,svg,html}`` into ``directory``; returns the paths written.

    Raises UsageError (an OSError's one-line form) when a file cannot be written.
    """
    snapshot = tracker.snapshot(at, strategies=[])
    if redacting:
        snapshot = redact(snapshot)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write into {directory}: {exc.strerror or exc}") from None
    base = directory / f"ctxtop-{export_stem(tracker.session.path)}-m{at}"
    files = {
        base.with_suffix(".json"): json_document(snapshot),
        base.with_suffix(".md"): render_markdown(snapshot),
        base.with_suffix(".svg"): svg,
        base.with_suffix(".html"): tracker.report_html(at, redacted=redacting),
    }
    for path, text in files.items():
        write_output(text, str(path))
    return list(files)


def export_stem(path: str | None) -> str:
    """The log's name in an export's file names: its stem, and the sample's number when one sample of a log that holds
    several was opened (``log.json#2``), so that the exports of two samples do not overwrite each other."""
    if path is None:
        return "session"
    source, sample = split_sample(path)
    stem = Path(source).stem + (f"-sample{sample}" if str(source) != str(path) else "")
    return re.sub(r"[^\w.-]+", "_", stem)[:60]
