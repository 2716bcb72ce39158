"""Errors the CLI reports as one line with exit code 2."""

from __future__ import annotations

import sys

from ctxtop.context.output.redact import redact_text_if
from ctxtop.context.rules.pins import PinsError
from ctxtop.context.sanitize import one_line
from ctxtop.context.store.source import SourceError
from ctxtop.context.strategies import StrategyError
from ctxtop.context.window.tokens import EncodingUnavailable
from ctxtop.parsers.registry import UnknownFormat


class UsageError(ValueError):
    """Arguments that do not make sense together."""


USER_ERRORS = (PinsError, SourceError, StrategyError, UnknownFormat, EncodingUnavailable, UsageError)


def os_error_line(exc: OSError) -> str:
    """An OSError as the user needs it: what was refused, and why (no errno, no class name)."""
    where = exc.filename if exc.filename is not None else ""
    why = exc.strerror or str(exc)
    return f"{where}: {why}" if where != "" else why


class _Messages:
    redacting = False  # set by the command run (its --redact): a CI job's log is shared as widely as its output


def redact_messages(on: bool) -> None:
    """Mask secrets and personal data in every message ``say`` prints from now on (``--redact``)."""
    _Messages.redacting = on


def say(line: str) -> None:
    """Print ``line`` on stderr as one line, with control sequences stripped, masked under ``--redact``.

    Every message ctxtop prints for the user goes through here: they name files and quote log
    text, and a file name may hold ``\\e]0;title\\a`` or ``\\e[2J`` (a lone surrogate from an
    undecodable name is written escaped, stderr's own rule)."""
    print(redact_text_if(one_line(line), _Messages.redacting), file=sys.stderr, flush=True)
