"""Errors the CLI reports as one line with exit code 2."""

from __future__ import annotations

from context.pins import PinsError
from context.source import SourceError
from context.strategies import StrategyError
from context.tokens import EncodingUnavailable
from parsers.registry import UnknownFormat


class UsageError(ValueError):
    """Arguments that do not make sense together."""


USER_ERRORS = (PinsError, SourceError, StrategyError, UnknownFormat, EncodingUnavailable, UsageError)
