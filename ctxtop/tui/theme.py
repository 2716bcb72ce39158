"""Category colours, shared by every widget that draws the window."""

from __future__ import annotations

CATEGORY_COLORS = {
    "system": "#8a8fd6",
    "tools": "#5fafd7",
    "injected": "#af87d7",
    "user": "#5fd75f",
    "assistant": "#d7af5f",
    "reasoning": "#d787af",
    "tool_call": "#87d7d7",
    "tool_result": "#5f87d7",
    "summary": "#ffaf00",
    "image": "#d75f5f",
    "unattributed": "#6c6c6c",
}
FREE_COLOR = "grey50"  # readable as "free" on dark and light themes alike
COMPACTION_COLOR = "#ffaf00"
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
