"""Regular expressions compiled the first time they are used, not when their module is imported.

Rule detection and checking hold about seventy patterns, some of them long
alternations; compiling them all costs about 25 ms, paid by every process that
imports the rules. A hook or the status line is one process per event, and most
events (a tool call and its result appended) never reach most of them.
"""

from __future__ import annotations

import re
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
