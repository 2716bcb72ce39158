"""The header: which session, how full the window is, where the cursor is, live or paused."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from ctxtop.context.output.sanitize import one_line


def header_text(snapshot: dict, *, available: int, mode: str) -> Text:
    """Two lines: session, format, model and mode; then window use, reported vs estimated, position."""
    source, at, window = snapshot["source"], snapshot["at"], snapshot["window"]
    reported = window["reported_tokens"]
    used = reported if reported is not None else window["estimated_tokens"]
    share = 100 * used / window["limit"] if window["limit"] else 0
    text = Text()
    text.append(one_line(Path(source["path"] or "").name, 48), style="bold")
    text.append(f"  {source['format']}  {one_line(source['model'] or 'model?', 32)}  ", style="dim")
    text.append(mode, style="bold green" if "FOLLOW" in mode or "REPLAY" in mode else "bold yellow")
    text.append("\n")
    # Most telling first, so that a narrow terminal cuts the least useful: use, position, then the two counts.
    # A limit ctxtop fell back on (no --window, none in the log, an unknown model) is a guess: say so.
    limit = f"≈{window['limit']:,}" if window.get("limit_source") == "default" else f"{window['limit']:,}"
    approx = "≈" if window.get("counts_estimated") else ""  # a big tail's first paint: characters per token
    text.append(f"{approx if reported is None else ''}{used:,} / {limit} tokens ", style="bold")
    text.append(f"({share:.1f}%)", style="bold red" if share >= 90 else "bold yellow" if share >= 70 else "bold green")
    text.append(f"  message {at['message']} / {available}", style="bold")
    if available < at["messages"]:
        text.append(f" (of {at['messages']})", style="dim")
    text.append(f"  reported {reported:,}" if reported is not None else "  reported —", style="dim")
    text.append(f"  est. {approx}{window['estimated_tokens']:,}", style="dim")
    subagents = snapshot.get("subagents") or {}
    if subagents.get("messages"):
        text.append(f"  sub-agents {subagents['messages']:,} msgs {subagents['tokens']:,} tok", style="dim")
    return text
