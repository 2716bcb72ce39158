"""Strategy previews: what each compaction strategy would do to the window, side by side.

A strategy is a function of (window, parameters, pins) that returns a preview;
it never changes the session. ``preview_all`` runs the requested specs (every
strategy at its defaults when none is given) on one frame.
"""

from __future__ import annotations

from ctxtop.context.strategies.agents import STRATEGIES as _AGENTS
from ctxtop.context.strategies.base import Strategy
from ctxtop.context.strategies.clearing import STRATEGIES as _CLEARING
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import StrategyError, parse_spec
from ctxtop.context.strategies.preview import Preview
from ctxtop.context.strategies.summarizing import STRATEGIES as _SUMMARIZING
from ctxtop.context.strategies.truncation import STRATEGIES as _TRUNCATION

STRATEGIES: dict[str, Strategy] = {s.name: s for s in (*_TRUNCATION, *_CLEARING, *_SUMMARIZING, *_AGENTS)}

__all__ = ["STRATEGIES", "Frame", "Preview", "Strategy", "StrategyError", "parse_spec", "preview", "preview_all"]


def preview(frame: Frame, spec: str) -> Preview:
    """The preview of one ``NAME[:key=value,...]`` spec on ``frame``."""
    name, raw = parse_spec(spec)
    strategy = STRATEGIES.get(name)
    if strategy is None:
        raise StrategyError(f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})")
    return strategy.preview(frame, raw)


def preview_all(frame: Frame, specs: list[str] | None = None) -> list[Preview]:
    return [preview(frame, spec) for spec in (specs or list(STRATEGIES))]
