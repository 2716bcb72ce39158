"""The prompt-cache price of a compaction.

A compaction rewrites the prompt's prefix, so the first model call after it writes the
new prompt to the cache again (``cache_creation_input_tokens``, split into 5-minute and
1-hour writes when the log has it) instead of reading it. The summarizing call is logged
only where the harness ran it as a sub-agent (Claude Code 2.1's ``agent-acompact-*``
transcript): its prompt is then priced as logged, at its own cache rates. Elsewhere it is
estimated: it reads the window that was compacted (``pre_tokens``) at the input price. Its
output is the summary either way (the transcript's ``output_tokens`` is a count taken
mid-stream, not the summary's length). ``payback_turns``: how many later calls the
smaller prompt needs to save, at the cache-read price, what the compaction cost beyond
reading the old prefix from the cache (the re-write premium and the summarizing call).
"""

from __future__ import annotations

from typing import Any

from ctxtop.context.audit.forensics.prices import PRICE_TABLE, READ, WRITE_1H, WRITE_5M, price_of
from ctxtop.parsers.model import Usage

MILLION = 1_000_000
# Compactions that call no model: Claude Code's microcompact swaps old tool results for a placeholder,
# Cline's truncation drops a range of messages. Only the cache re-write is paid.
NO_MODEL_CALL = frozenset({"microcompact", "cline_truncation"})


def compaction_cost(first_call: Usage | None, model: str | None, pre_tokens: int | None, summary_tokens: int | None,
                    summarizing_call: tuple[str, Usage] | None = None, *, calls_model: bool = True) -> dict[str, Any]:
    """The ``cost`` object of a compaction's forensics (see the README's snapshot schema).

    ``summarizing_call``: (where it is logged, its usage) when the log holds the summarizing call;
    ``calls_model``: False for a compaction that makes none (``NO_MODEL_CALL``), which costs the re-write only."""
    write = first_call.cache_write_tokens if first_call else None
    write_5m = first_call.cache_write_5m_tokens if first_call else None
    write_1h = first_call.cache_write_1h_tokens if first_call else None
    read = first_call.cache_read_tokens if first_call else None
    logged = summarizing_call[1] if summarizing_call is not None else None
    prompt = logged.prompt_tokens if logged is not None else pre_tokens
    if not calls_model:
        summarization: int | None = 0
    elif prompt is not None or summary_tokens is not None:
        summarization = (prompt or 0) + (summary_tokens or 0)
    else:
        summarization = None
    cost: dict[str, Any] = {
        "cache_write_tokens": write,
        "cache_write_5m_tokens": write_5m,
        "cache_write_1h_tokens": write_1h,
        "cache_read_tokens": read,
        "summarization_tokens": summarization,
        "summarization_call": None if summarizing_call is None or logged is None else {
            "source": summarizing_call[0], "prompt_tokens": logged.prompt_tokens,
            "cache_read_tokens": logged.cache_read_tokens, "cache_write_tokens": logged.cache_write_tokens},
        "estimated": calls_model and summarization is not None and logged is None,
        "usd": None,
        "payback_turns": None,
        "price_table": PRICE_TABLE,
    }
    price = price_of(model)
    if price is None or write is None:
        return cost  # tokens only: no price for this model, or no cache figures in the log
    per_token = price.input / MILLION
    # Writes not split by lifetime are priced as 5-minute writes, the API's default.
    unsplit = max(0, write - (write_5m or 0) - (write_1h or 0))
    five_minute, one_hour = (write_5m or 0) + unsplit, write_1h or 0
    summarizing = (_prompt_price(logged, pre_tokens, price.input) + (summary_tokens or 0) * price.output) / MILLION if calls_model else 0.0
    usd = (five_minute * WRITE_5M + one_hour * WRITE_1H + (read or 0) * READ) * per_token + summarizing
    cost["usd"] = round(usd, 6)
    prompt_after = (read or 0) + write  # (plus the few uncached input tokens, which both prompts pay)
    saved_per_turn = (pre_tokens - prompt_after) * READ * per_token if pre_tokens else 0
    if saved_per_turn > 0:
        premium = (five_minute * (WRITE_5M - READ) + one_hour * (WRITE_1H - READ)) * per_token + summarizing
        cost["payback_turns"] = round(premium / saved_per_turn, 1)
    return cost


def _prompt_price(logged: Usage | None, pre_tokens: int | None, input_price: float) -> float:
    """What the summarizing call's prompt cost, per million tokens' prices: as logged (cache reads and
    writes at their rates, writes not split priced as 5-minute ones), else the compacted window at full price."""
    if logged is None:
        return (pre_tokens or 0) * input_price
    read, write = logged.cache_read_tokens or 0, logged.cache_write_tokens or 0
    write_1h = logged.cache_write_1h_tokens or 0
    uncached = max(0, logged.prompt_tokens - read - write)
    return (uncached + (write - write_1h) * WRITE_5M + write_1h * WRITE_1H + read * READ) * input_price
