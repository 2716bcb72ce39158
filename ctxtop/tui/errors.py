"""Errors the CLI reports as one line with exit code 2."""

from __future__ import annotations

from ctxtop.context.rules.pins import PinsError
from ctxtop.context.store.source import SourceError
from ctxtop.context.strategies import StrategyError
from ctxtop.context.window.tokens import EncodingUnavailable
from ctxtop.parsers.registry import UnknownFormat


class UsageError(ValueError):
    """Arguments that do not make sense together."""


USER_ERRORS = (PinsError, SourceError, StrategyError, UnknownFormat, EncodingUnavailable, UsageError)
