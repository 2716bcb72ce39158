"""The header: which session, how full the window is, where the cursor is, live or paused."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.text import Text

from ctxtop.context.output.marks import limit_mark, use_mark
from ctxtop.context.sanitize import one_line
from ctxtop.tui.widgets.cells import percent_text
from ctxtop.tui.widgets.fitted import cut

# The first line's file name and model, when the terminal is wide enough, and at the least; then the few characters
# of the name kept once the model is gone and before the mode gives anything up.
NAME_CHARS, MODEL_CHARS = 48, 32
MIN_NAME_CHARS, MIN_MODEL_CHARS = 16, 12
FEW_NAME_CHARS = 8


def _first_line(name: str, form: str, model: str, modes: Sequence[str], width: int) -> tuple[str, str, str, str]:
    """The name, format, model and mode that fit ``width`` columns ("" for one left out). The mode says what state
    the user is in and how to get back (a sub-agent's "⌫ back"): the name (a session's id, mostly) gives way first,
    down to a few characters, then the model, down to a few and then whole, then the name again; only then the
    mode's shorter forms (``modes``, fullest first), and then the format. What still does not fit is cut by the caller."""
    def fit(mode: str, with_model: bool, with_format: bool, least_name: int) -> tuple[str, str, str, str] | None:
        room = width - len(mode) - (len(form) + 2 if with_format else 0) - 2  # the name's and the model's
        if with_model:
            least_model = min(len(model), MIN_MODEL_CHARS)
            if room - 2 - least_model < min(len(name), least_name):
                return None
            shown_name = one_line(name, max(min(len(name), least_name), room - 2 - len(model)))
            return shown_name, form, one_line(model, room - 2 - len(shown_name)), mode
        if room < min(len(name), least_name):
            return None
        return one_line(name, room), form if with_format else "", "", mode

    tries = [(modes[0], True, True, MIN_NAME_CHARS), (modes[0], False, True, FEW_NAME_CHARS)]
    tries += [(mode, False, True, FEW_NAME_CHARS) for mode in modes[1:]] + [(modes[-1], False, False, FEW_NAME_CHARS)]
    for attempt in tries:
        if (parts := fit(*attempt)) is not None:
            return parts
    return one_line(name, FEW_NAME_CHARS), "", "", modes[-1]


def header_text(snapshot: dict, *, available: int | None, mode: str | Sequence[str], width: int | None = None) -> Text:
    """Two lines: session, format, model and mode; then window use, reported vs estimated, position.
    ``available``: the messages there are to step through; None while they are not known (a first paint: its
    messages are numbered from the last compaction, not as the rest of the screen will number them).
    ``mode``: the mode, or its forms from the fullest to the shortest, of which the first that fits is shown.
    ``width``: the columns there are; the file name and the model give way first, so that the mode stays
    in sight whole, and what still does not fit is cut with an ellipsis."""
    modes = [mode] if isinstance(mode, str) else list(mode)
    source, at, window = snapshot["source"], snapshot["at"], snapshot["window"]
    reported = window["reported_tokens"]
    used = window["used_tokens"]
    share = 100 * used / window["limit"] if window["limit"] else 0
    first = Text()
    name, model = one_line(Path(source["path"] or "").name, 300), one_line(source["model"] or "model?", 120)
    form = source["format"]
    if width is not None:
        name, form, model, mode = _first_line(name, form, model, modes, width)
    else:
        name, model, mode = one_line(name, NAME_CHARS), one_line(model, MODEL_CHARS), modes[0]
    first.append(name, style="bold")
    first.append("".join(f"  {part}" for part in (form, model) if part) + "  ", style="dim")
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
