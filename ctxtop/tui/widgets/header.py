"""The header: which session, how full the window is, where the cursor is, live or paused."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from ctxtop.context.output.marks import limit_mark, use_mark
from ctxtop.context.sanitize import one_line
from ctxtop.tui.widgets.cells import percent_text
from ctxtop.tui.widgets.fitted import cut

# The first line's file name and model, when the terminal is wide enough, and at the least.
NAME_CHARS, MODEL_CHARS = 48, 32
MIN_NAME_CHARS, MIN_MODEL_CHARS = 16, 12


def header_text(snapshot: dict, *, available: int | None, mode: str, width: int | None = None) -> Text:
    """Two lines: session, format, model and mode; then window use, reported vs estimated, position.
    ``available``: the messages there are to step through; None while they are not known (a first paint: its
    messages are numbered from the last compaction, not as the rest of the screen will number them).
    ``width``: the columns there are; the file name and the model give way first, so that the mode stays
    in sight, and what still does not fit is cut with an ellipsis."""
    source, at, window = snapshot["source"], snapshot["at"], snapshot["window"]
    reported = window["reported_tokens"]
    used = window["used_tokens"]
    share = 100 * used / window["limit"] if window["limit"] else 0
    first = Text()
    name, model = one_line(Path(source["path"] or "").name, 300), one_line(source["model"] or "model?", 120)
    if width is not None:  # whole where there is room; the name gives way first, then the model, down to a few characters each
        room = width - len(mode) - len(source["format"]) - 6
        name = one_line(name, max(MIN_NAME_CHARS, room - min(len(model), MODEL_CHARS)))
        model = one_line(model, max(MIN_MODEL_CHARS, room - len(name)))
    else:
        name, model = one_line(name, NAME_CHARS), one_line(model, MODEL_CHARS)
    first.append(name, style="bold")
    first.append(f"  {source['format']}  {model}  ", style="dim")
    moving = ("FOLLOW" in mode or "REPLAY" in mode) and "PAUSED" not in mode
    first.append(mode, style="bold green" if moving else "bold red" if "STOPPED" in mode else "bold yellow")
    # Most telling first, so that a narrow terminal cuts the least useful: use, position, then the two counts.
    # A limit ctxtop fell back on (no --window, none in the log, an unknown model) is a guess: say so.
    second = Text()
    limit = f"{limit_mark(window)}{window['limit']:,}"
    approx = "≈" if window.get("counts_estimated") else ""  # a big tail's first paint: characters per token
    second.append(f"{use_mark(window)}{used:,} / {limit} tokens ", style="bold")
    # Then each further figure whole, or not at all: a number cut short ("est. 33,…", "message 34…") reads as another.
    more = [(f"({percent_text(share)})", "bold red" if share >= 90 else "bold yellow" if share >= 70 else "bold green"),
            (f"  message {at['message']} / {available}" if available is not None else "  latest message", "bold")]
    if available is not None and available < at["messages"]:
        more.append((f" (of {at['messages']})", "dim"))
    more += [(f"  reported {reported:,}" if reported is not None else "  reported —", "dim"),
             (f"  est. {approx}{window['estimated_tokens']:,}", "dim")]
    subagents = snapshot.get("subagents") or {}
    if subagents.get("messages"):
        # (our count of their text, as est. is of the window's: each agent's own window is in the Agents pane)
        more.append((f"  sub-agents {subagents['messages']:,} msgs est. {subagents['tokens']:,} tok", "dim"))
    for part, style in more:
        if width is not None and len(second) + len(part) > width:
            break
        second.append(part, style=style)
    return cut(Text("\n").join([first, second]), width)  # a wrapped line would push the next out of the header
