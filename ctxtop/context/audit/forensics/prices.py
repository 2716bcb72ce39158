"""A small, dated price table for the prompt-cache cost of a compaction.

Source: https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing"), checked
on PRICE_TABLE's date; USD per million tokens, base input and output. The cache tiers follow
the multipliers that page states: a 5-minute cache write costs 1.25× the base input price, a
1-hour write 2×, a cache read 0.1×. Models not listed are priced at nothing: their costs are
reported in tokens only (``usd`` null). Long-context surcharges (prompts over 200k tokens on
the models that have them) are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

PRICE_TABLE = "anthropic-list-prices-2026-12-03"
WRITE_5M, WRITE_1H, READ = 1.25, 2.0, 0.1


@dataclass(slots=True, frozen=True)
class Price:
    input: float  # USD per million base input tokens
    output: float  # USD per million output tokens


# Model id prefixes; the longest prefix that matches wins ("claude-opus-4-5…" before "claude-opus-4…").
PRICES: dict[str, Price] = {
    "claude-opus-4-8": Price(5, 25),
    "claude-opus-4-7": Price(5, 25),
    "claude-opus-4-6": Price(5, 25),
    "claude-opus-4-5": Price(5, 25),
    "claude-opus-4-1": Price(15, 75),
    "claude-opus-4": Price(15, 75),
    "claude-sonnet-4-6": Price(3, 15),
    "claude-sonnet-4-5": Price(3, 15),
    "claude-sonnet-4": Price(3, 15),
    "claude-3-7-sonnet": Price(3, 15),
    "claude-haiku-4-5": Price(1, 5),
    "claude-3-5-haiku": Price(0.8, 4),
}


def price_of(model: str | None) -> Price | None:
    if not model:
        return None
    model = model.split("[", 1)[0].strip().lower()  # "claude-sonnet-4-5[1m]"
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None
