"""Regular expressions compiled the first time they are used, not when their module is imported.

Rule detection and checking hold about seventy patterns, some of them long
alternations; compiling them all costs about 25 ms, paid by every process that
imports the rules. A hook or the status line is one process per event, and most
events (a tool call and its result appended) never reach most of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast


class _CompiledOnUse:
    """Stands for ``re.compile(source, flags)``. The first attribute asked for compiles the pattern; each
    attribute is then kept on this object, so a later ``.search`` is found without ``__getattr__`` and
    costs what the compiled pattern's own method costs."""

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends probe for special methods: not the pattern's
            raise AttributeError(name)
        value = getattr(re.compile(self._source, self._flags), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"compiled_on_use({self._source!r}, {self._flags})"


def compiled_on_use(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, done when the pattern is first used."""
    return cast("re.Pattern[str]", _CompiledOnUse(source, flags))


# The only characters outside ASCII that a case-insensitive pattern takes for an ASCII letter
# (İ and ı for i, ſ for s, the Kelvin sign for k): a text holding one goes on to the pattern.
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def any_of(words: Iterable[str]) -> str:
    """A pattern matching any of ``words`` as written (spaces included), tried in their order: the source
    of an alternation whose words a ``KeywordGate`` is also made of, so that they are stated once."""
    return "(?:" + "|".join(re.escape(word) for word in words) + ")"


class KeywordGate:
    """Whether a case-insensitive pattern may match a text, from the literal words its matches hold.

    ``keywords``, in lower case, must be such that every match of the pattern holds one of them as
    it is (no ``\\s+`` inside a keyword: the pattern's own literal spaces only). Then a text without
    any of them cannot match, and saying so costs a lower-casing and a few substring searches, where
    the pattern's own search tries its alternation at every position of the text (about a third of the
    time on real tool output and prose). It never says no where the pattern would match."""

    def __init__(self, *keywords: str) -> None:
        if any(k != k.lower() or not k for k in keywords):
            raise ValueError("keywords are non-empty and in lower case")
        # A keyword holding another is found wherever that one is ("decided", "decide"): one search less.
        self.keywords = tuple(k for k in dict.fromkeys(keywords) if not any(o != k and o in k for o in keywords))

    def may_match(self, text: str) -> bool:
        lowered = text.lower()
        for keyword in self.keywords:  # (a loop, not any() over a generator: a third cheaper)
            if keyword in lowered:
                return True
        if text.isascii():
            return False
        # (four substring searches: a third of the time of a character class searched for)
        folds = _FOLDS_TO_ASCII
        return folds[0] in text or folds[1] in text or folds[2] in text or folds[3] in text
