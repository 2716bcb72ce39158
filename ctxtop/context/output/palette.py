"""The colour of each category and of a compaction, shared by every front end (TUI, HTML report)."""

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
    "inferred_system_tools": "#5f5f87",  # an inference: the system prompt and tools the log does not show
    "unattributed": "#6c6c6c",
}
COMPACTION_COLOR = "#ffaf00"
