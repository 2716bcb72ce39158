"""A pin's ``forbid`` regexes, matched against tool calls in bounded time.

A user's pattern can backtrack catastrophically (``(a+)+$`` against a long run of
``a``): Python's ``re`` would then never return. Patterns are compiled with the
``regex`` package (``re``'s syntax, VERSION0), whose searches take a timeout. A
search that runs out of time means the pattern cannot be used on such input:
it is skipped for that call and every later one, and the audit says so (a
``forbid_skipped`` note at the call where it ran out).

What was learnt about a pattern is kept for the process, by its text, so that a
re-audit (a new pin, the next live update) neither pays for it again nor loses
the note: the note is raised again at the same call, and the calls after it
are not searched.
"""

from __future__ import annotations

from functools import lru_cache

# One search may take this long, plus a little per character of the text searched (a search of a
# 200 MB tool input that does not backtrack takes about a second), before its pattern is skipped.
SEARCH_SECONDS = 1.0
SECONDS_PER_MILLION_CHARS = 0.1


class ForbidError(ValueError):
    """A pattern that does not compile; the message says why."""


class ForbidPattern:
    """One compiled pattern and, once a search ran out of time, the message where it did."""

    def __init__(self, pattern: str) -> None:
        import regex  # here, not at the top: the status line, which matches no call, is spared its import

        self.pattern = pattern
        try:
            self._compiled = regex.compile(pattern)
        except (regex.error, ValueError, OverflowError, RecursionError) as exc:
            raise ForbidError(str(exc)) from None
        self.timed_out_at: int | None = None
        self.timed_out_on: str | None = None  # the key of the call where it did (``matches``' ``call``)

    def matches(self, message: int, *texts: str, call: str | None = None) -> bool | None:
        """Whether the pattern is found in any of ``texts`` (a call at ``message``, ``call`` its key);
        None when it cannot tell: it ran out of time here, or did at an earlier call."""
        if self.timed_out_at is not None and message >= self.timed_out_at:
            return None
        for text in texts:
            try:
                if self._compiled.search(text, timeout=time_limit(len(text))) is not None:
                    return True
            except TimeoutError:
                if self.timed_out_at is None or message < self.timed_out_at:
                    self.timed_out_at, self.timed_out_on = message, call
                return None
        return False


def time_limit(chars: int) -> float:
    """Seconds one search of a text of ``chars`` characters may take."""
    return SEARCH_SECONDS + SECONDS_PER_MILLION_CHARS * chars / 1e6


@lru_cache(maxsize=1024)
def forbid_pattern(pattern: str) -> ForbidPattern:
    """The compiled pattern (the same object for the same text: what it learnt is kept). Raises ForbidError."""
    return ForbidPattern(pattern)
