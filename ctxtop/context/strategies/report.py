"""Previews as data: the ``strategies`` section of a snapshot, and the frame of a session."""

from __future__ import annotations

from typing import Any

from ctxtop.context.rules.constraints import Constraint, WindowText
from ctxtop.context.strategies.frame import Frame
from ctxtop.context.strategies.params import TRIGGER_KINDS
from ctxtop.context.strategies.preview import KEPT, Preview
from ctxtop.context.window.replay import Window
from ctxtop.context.window.session import Session


def session_frame(session: Session, at: int | None, constraints: list[Constraint], budget: int | None = None,
                  window: Window | None = None, text: WindowText | None = None) -> Frame:
    """The frame of ``session`` after message ``at``, with its reported prompt size and limit for triggers."""
    message = session.clamp(at)
    return Frame(
        window if window is not None else session.window_at(message),
        session.counter,
        constraints,
        prompt_tokens=session.reported_at(message),
        limit=session.limit()[0],
        budget=budget,
        text=text,
    )


def preview_dict(frame: Frame, preview: Preview) -> dict[str, Any]:
    counts = preview.outcome_counts()
    return {
        "strategy": preview.strategy,
        "params": {key: _json_param(value) for key, value in preview.params.items()},
        "trigger": {"rule": preview.trigger.rule, "fires": preview.trigger.fires},
        "applies": preview.applies,
        "reason": preview.reason,
        "tokens": {
            "before": preview.tokens_before,
            "after": preview.tokens_after,
            "freed": preview.freed,
            "percent_of_before": round(100 * preview.tokens_after / preview.tokens_before, 1) if preview.tokens_before else None,
        },
        "categories_after": preview.categories_after,
        "fates": preview.fate_counts(),
        # Blocks not listed are kept as they are.
        "blocks": [
            {
                "message": frame.blocks[i].entry.index,
                "block": frame.blocks[i].position,
                "category": frame.categories[i],
                "fate": fate,
                "tokens_before": frame.tokens[i],
                "tokens_after": preview.tokens_after_by_block.get(i, 0 if fate != KEPT else frame.tokens[i]),
            }
            for i, fate in enumerate(preview.fates)
            if fate != KEPT or i in preview.tokens_after_by_block
        ],
        "added": [{"category": a.category, "tokens": a.tokens, "label": a.label} for a in preview.added],
        "constraints": {
            cid: {"outcome": o.outcome, "before": o.before, "where": o.where} for cid, o in preview.constraints.items()
        },
        "constraint_counts": {**counts, "total": sum(counts.values())},
        "cache": {"prefix_tokens": preview.cache_prefix_tokens, "rewrite_tokens": preview.cache_rewrite_tokens},
        "pair_safe": preview.pair_safe,
        "notes": preview.notes,
    }


def _json_param(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and value[0] in TRIGGER_KINDS:
        return "now" if value[0] == "now" else f"{value[0]}:{value[1]}"
    return value


STRATEGY_TABLE_HEADER = ["strategy", "parameters", "triggers now?", "tokens after", "constraints kept/at risk/lost", "cache re-write", "note"]


def strategy_rows(previews: list[dict[str, Any]]) -> list[list[str]]:
    """One table row per preview dict: the ``ctxtop preview`` table and the Markdown one."""
    rows = []
    for p in previews:
        fires = p["trigger"]["fires"]
        triggers = {True: "yes", False: "no", None: "on demand"}[fires]
        if fires is not None:
            triggers += f" ({p['trigger']['rule']})"
        tokens = p["tokens"]
        # From the counts, not from percent_of_before: 41.45% rounded to 41.5 and then to a whole number is 42.
        percent = f" ({100 * tokens['after'] / tokens['before']:.0f}%)" if tokens["before"] else ""
        counts = p["constraint_counts"]
        outcome = f"{counts['kept']}/{counts['at_risk']}/{counts['lost']} of {counts['total']}" if counts["total"] else "—"
        rows.append([
            p["strategy"],
            shown_params(p["strategy"], p["params"]),
            triggers,
            f"{tokens['after']:,}{percent}",
            outcome,
            f"{p['cache']['rewrite_tokens']:,}",
            p["reason"] or "; ".join(p["notes"]),
        ])
    return rows


def shown_params(strategy: str, params: dict[str, Any]) -> str:
    """The parameters that differ from the strategy's defaults (given, or derived from the budget)."""
    from ctxtop.context.strategies import STRATEGIES

    defaults = {p.name: _json_param(p.default) for p in STRATEGIES[strategy].params} if strategy in STRATEGIES else {}
    shown = []
    for key, value in params.items():
        if key in defaults and defaults[key] == value:
            continue
        if isinstance(value, list):
            value = "|".join(map(str, value))
        shown.append(f"{key}={value}")
    return ", ".join(shown) or "defaults"
