"""Session logs → normalized entries. Pure: no terminal, no UI, no printing.

One module per log format; ``registry`` detects the format and runs its parser.
"""

from ctxtop.parsers.model import (
    CATEGORIES,
    Block,
    Compaction,
    Diagnostics,
    Entry,
    ParseResult,
    SessionMeta,
    Usage,
)
from ctxtop.parsers.registry import PARSERS, UnknownFormat, detect, parse

__all__ = [
    "CATEGORIES",
    "PARSERS",
    "Block",
    "Compaction",
    "Diagnostics",
    "Entry",
    "ParseResult",
    "SessionMeta",
    "UnknownFormat",
    "Usage",
    "detect",
    "parse",
]
