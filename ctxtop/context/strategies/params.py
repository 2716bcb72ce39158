"""Strategy parameters: declared with their real systems' names and defaults, parsed from specs.

A spec is ``NAME`` or ``NAME:key=value,key=value``. Lists inside a value are
separated by ``|`` (``exclude_tools=Edit|Write``), since commas separate keys.
Numbers may use ``_`` or a ``k`` suffix (``100_000``, ``100k``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxtop.context.sanitize import clean_text
from ctxtop.parsers.numbers import MAX_COUNT

INT, BOOL, TEXT, NAMES, INT_OR_ALL, BOOL_OR_NAMES, TRIGGER = "int", "bool", "text", "names", "int|all", "bool|names", "trigger"
# A trigger value: ("input_tokens", N), ("tool_uses", N) or ("now", 0) to force it.
TRIGGER_KINDS = ("input_tokens", "tool_uses", "now")


class StrategyError(ValueError):
    """A strategy spec that cannot be used; the message is one line."""


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: str
    default: Any
    help: str
    minimum: int = 0
    shown_default: str | None = None  # how a default that depends on the session is named (None: the default itself)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"clear_tool_results:keep=8,trigger=now"`` → ``("clear_tool_results", {"keep": "8", "trigger": "now"})``."""
    name, _, rest = spec.strip().partition(":")
    raw: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise StrategyError(f"strategy {name!r}: expected key=value, got {item!r}")
        if key.strip() in raw:  # (which one was meant? not the last one silently)
            raise StrategyError(f"strategy {name!r}: {key.strip()!r} given twice")
        raw[key.strip()] = value.strip()
    return name.strip(), raw


def coerce(strategy: str, params: tuple[Param, ...], raw: dict[str, str]) -> dict[str, Any]:
    """Defaults overlaid with the given values, each converted to its declared kind."""
    declared = {p.name: p for p in params}
    unknown = sorted(set(raw) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise StrategyError(f"strategy {strategy!r} has no parameter {unknown[0]!r} (it takes: {known})")
    values = {p.name: p.default for p in params}
    for key, text in raw.items():
        values[key] = _convert(strategy, declared[key], text)
    return values


def _convert(strategy: str, param: Param, text: str) -> Any:
    where = f"strategy {strategy!r}, {param.name}"
    lowered = text.lower()
    if param.kind == INT or (param.kind == INT_OR_ALL and lowered != "all"):
        return _at_least(where, text, param.minimum)
    if param.kind == INT_OR_ALL:
        return "all"
    if param.kind == BOOL or (param.kind == BOOL_OR_NAMES and lowered in ("true", "false", "yes", "no", "1", "0")):
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise StrategyError(f"{where}: expected true or false, got {text!r}")
    if param.kind in (NAMES, BOOL_OR_NAMES):
        return [name for name in (n.strip() for n in text.split("|")) if name]
    if param.kind == TRIGGER:
        return parse_trigger(where, text, param.minimum)
    return clean_text(text)  # a text the strategy puts in the window, counted as it is shown (no escape sequence)


def parse_trigger(where: str, text: str, minimum: int = 0) -> tuple[str, int]:
    kind, sep, value = text.partition(":")
    if not sep:
        if kind.lower() in ("now", "force", "forced"):
            return ("now", 0)
        return ("input_tokens", _at_least(where, kind, minimum))
    if kind not in TRIGGER_KINDS[:2]:
        raise StrategyError(f"{where}: trigger kind must be input_tokens or tool_uses, got {kind!r}")
    return (kind, _at_least(where, value, minimum))


def _at_least(where: str, text: str, minimum: int) -> int:
    number = _int(where, text)
    if number < minimum:
        raise StrategyError(f"{where}: must be at least {minimum:,}, got {number:,}")
    return number


def _int(where: str, text: str) -> int:
    try:
        return token_number(text)
    except ValueError as error:
        raise StrategyError(f"{where}: {error}") from None


def token_number(text: str) -> int:
    """A count of tokens as people write one: ``100000``, ``100_000``, ``100,000``, ``100k``, ``1.5m``. Raises
    ValueError (its message says why) for anything else, or a count beyond any window."""
    cleaned = text.replace("_", "").replace(",", "").strip().lower()
    scale = 1
    if cleaned.endswith("k"):
        cleaned, scale = cleaned[:-1], 1000
    elif cleaned.endswith("m"):
        cleaned, scale = cleaned[:-1], 1_000_000
    try:
        value = int(float(cleaned) * scale) if scale > 1 else int(cleaned)
    except (ValueError, OverflowError):  # OverflowError: "infk"
        raise ValueError(f"not a whole number: {text!r}") from None
    if abs(value) >= MAX_COUNT:  # beyond any window, and beyond what 64-bit JSON output holds
        raise ValueError(f"too large: {text!r}")
    return value


def describe_trigger(trigger: tuple[str, int]) -> str:
    kind, value = trigger
    if kind == "now":
        return "forced"
    if kind == "tool_uses":
        return f"tool uses > {value:,}"
    return f"input tokens > {value:,}"
