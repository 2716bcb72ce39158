"""Which generation of summary a compaction wrote: a summary of a summary drifts further from the source."""

from __future__ import annotations

from bisect import bisect_right


def generation_of(summaries_before: list[int], generations: list[tuple[int, int]]) -> int:
    """1 for a summary of original messages, n + 1 when the summarizer's window held a generation-n
    summary. ``generations``: (compaction message, generation) of the compactions so far, in order;
    a summary block belongs to the latest compaction at or before its message."""
    deepest = 0
    for message in summaries_before:
        position = bisect_right(generations, message, key=lambda g: g[0]) - 1
        if position >= 0:
            deepest = max(deepest, generations[position][1])
    return deepest + 1
