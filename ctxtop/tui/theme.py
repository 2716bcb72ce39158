"""Styles of the TUI; the category colours come from the palette every front end shares."""

from __future__ import annotations

from ctxtop.context.output.palette import CATEGORY_COLORS, COMPACTION_COLOR

__all__ = ["CATEGORY_COLORS", "COMPACTION_COLOR", "CURSOR_STYLE", "FATE_STYLES", "FREE_COLOR", "STATUS_STYLES"]

FREE_COLOR = "grey50"  # readable as "free" on dark and light themes alike
CURSOR_STYLE = "bold reverse"
# Constraint status and strategy outcome colours and icons.
STATUS_STYLES = {
    "kept": ("✔", "green"),
    "paraphrased": ("≈", "yellow"),
    "lost": ("✘", "bold red"),
    "unverifiable": ("?", "magenta"),
    "at_risk": ("≈", "yellow"),
}
FATE_STYLES = {
    "kept": ("", ""),
    "dropped": ("✘", "strike dim"),
    "placeholder": ("⌀", "dim italic"),
    "summarized": ("Σ", "yellow"),
    "truncated": ("…", "dim"),
}
