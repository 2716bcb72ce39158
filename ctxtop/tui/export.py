"""The TUI's `e`: the snapshot at the cursor as JSON and Markdown, an SVG of the screen and the HTML report."""

from __future__ import annotations

import re
from pathlib import Path

from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.redact import redact
from ctxtop.context.tracker import Tracker
from ctxtop.tui.output import write_output


def export_snapshot(tracker: Tracker, at: int, svg: str, directory: Path, *, redacting: bool = False) -> list[Path]:
    """Write ``ctxtop-<session>-m<at>.{json,md,svg,html}`` into ``directory``; returns the paths written.

    Raises UsageError (an OSError's one-line form) when a file cannot be written.
    """
    snapshot = tracker.snapshot(at, strategies=[])
    if redacting:
        snapshot = redact(snapshot)
    stem = re.sub(r"[^\w.-]+", "_", Path(tracker.session.path or "session").stem)[:60]
    base = directory / f"ctxtop-{stem}-m{at}"
    files = {
        base.with_suffix(".json"): json_document(snapshot),
        base.with_suffix(".md"): render_markdown(snapshot),
        base.with_suffix(".svg"): svg,
        base.with_suffix(".html"): tracker.report_html(at, redacted=redacting),
    }
    for path, text in files.items():
        write_output(text, str(path))
    return list(files)
