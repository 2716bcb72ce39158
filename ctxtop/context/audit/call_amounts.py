"""The amounts of money a tool call's input names, in whole units of their currency, with how the call wrote
each: the fields that hold an amount (``money_words.is_amount_key``), also in a shell command or a request body held
as a string, and what order lines cost (quantity × unit price)."""

from __future__ import annotations

import json
import re
from typing import Any

from ctxtop.context.audit.money_words import (
    CHINESE_NUMERAL,
    CJK_CURRENCIES,
    CURRENCY_CODES,
    CURRENCY_WORDS,
    NUMBER,
    chinese_number,
    is_amount_key,
    key_words,
    scaled,
)
from ctxtop.parsers.numbers import bounded_int

# One decoder for every call (``json.loads`` with an option makes a new one each time).
_DECODER = json.JSONDecoder(parse_int=bounded_int)


def amounts_in(text: str) -> list[tuple[str, float]]:
    """Each amount in a tool call's input (JSON text) in whole units, with how the call wrote it
    ("amount_cents 160000 = 1600")."""
    keyed, line_totals = _numbers_by_key(text)
    return [_in_whole_units(key, value) for key, value in keyed if is_amount_key(key)] + line_totals


# A field whose name says it counts a currency's hundredths ("amount_cents", "amountMinor", "price_in_pence") holds
# a hundred times the amount a cap states: 140000 cents are 1400, under a cap of 1500.
_HUNDREDTHS_WORDS = frozenset({"cent", "cents", "minor", "pence", "penny", "pennies"})


def _in_whole_units(key: str, value: float) -> tuple[str, float]:
    if _HUNDREDTHS_WORDS.isdisjoint(key_words(key)):
        return f"{key} {value:g}", value
    return f"{key} {value:g} = {value / 100:g}", value / 100


def _numbers_by_key(text: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """Every number in a tool call's input (JSON text) with the key it is under, numbers written as strings
    ("900", "$1,200.50") too; and the totals of its order lines (``_line_total``), each with how it was reckoned.
    An input JSON cannot decode whole — nested deeper than Python's decoder goes, an integer past its digit limit —
    is searched for "key": number pairs instead: nesting must not hide an amount."""
    try:
        data = _DECODER.decode(text)  # (NaN, Infinity and 1e999 as floats: over any cap but NaN)
    except (ValueError, RecursionError):
        return [(key, value) for key, raw in _keyed_numbers(text) if (value := _amount(raw)) is not None], []
    found = []
    line_totals = []
    # (a node, and the amount key it is under: an amount's list, or its {"currency_code", "value"} object)
    stack: list[tuple[Any, str | None]] = [(data, None)]
    while stack:
        node, under = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                key = str(key)
                words = key_words(key)
                if not words.isdisjoint(_COMMAND_WORDS) and (line := _command_line(value)):
                    found += _amounts_in_command(line)
                if isinstance(value, str) and not words.isdisjoint(_BODY_WORDS) and (body := _json_in(value)) is not None:
                    stack.append((body, None))
                if isinstance(value, (dict, list)):
                    stack.append((value, key if is_amount_key(key) else None))
                elif (amount := _amount(value)) is not None:
                    found.append((under if under is not None and key.lower() == "value" else key, amount))
            if (priced := _line_total(node)) is not None:
                line_totals.append(priced)
        elif isinstance(node, list):
            stack.extend((item, under) for item in node)
            found += [(under, amount) for item in node if under is not None and (amount := _amount(item)) is not None]
            lines = [priced[1] for item in node if isinstance(item, dict) and (priced := _line_total(item)) is not None]
            if len(lines) > 1:  # an order's lines: what it costs is their sum
                line_totals.append((f"{len(lines)} lines' quantity × price summed = {sum(lines):g}", sum(lines)))
    return found, line_totals


# An order line states a quantity and the price of one ({"quantity": 12, "unit_price": 450}): it costs their product,
# which a cap on an order or a purchase caps. A price that is already a line's total ("total_price") is not multiplied.
_QUANTITY_WORDS = frozenset({"quantity", "qty", "quantities"})
_UNIT_PRICE_WORDS = frozenset({"price", "cost"})
_TOTAL_WORDS = frozenset({"total", "subtotal", "grandtotal", "amount", "sum"})


def _line_total(node: dict[Any, Any]) -> tuple[str, float] | None:
    quantity = price = None
    for key, value in node.items():
        key = str(key)
        words = key_words(key)
        if quantity is None and (not words.isdisjoint(_QUANTITY_WORDS) or "数量" in key) and (number := _amount(value)) is not None:
            quantity = (key, number)
        elif (price is None and (not words.isdisjoint(_UNIT_PRICE_WORDS) and words.isdisjoint(_TOTAL_WORDS) or "单价" in key)
              and is_amount_key(key) and (number := _amount(value)) is not None):
            price = (key, number)
    if quantity is None or price is None:
        return None
    total = quantity[1] * price[1]
    return f"{quantity[0]} {quantity[1]:g} × {price[0]} {price[1]:g} = {total:g}", total


# A shell command's amounts are the ones it names, as a JSON body (curl -d '{"amount": 450}'), an option (--amount 3100,
# --amount=1800) or an assignment (amount=450 in a form field, a query string, an environment variable); its other
# numbers (PIDs, ports, line ranges, timestamps) are no money. A request body held as a string ("body": "{…}") is read
# as the JSON it is. Only under such keys: a file a call writes may quote an order without placing one.
_COMMAND_WORDS = frozenset({"command", "commands", "cmd", "script", "args", "argv"})
_BODY_WORDS = frozenset({"body", "data", "payload", "json", "params", "request", "arguments", "args", "variables"})
_KEYED_IN_COMMAND = re.compile(r"""(?:(?P<quote>["'])(?P<quoted>[^"'\s:]{1,60})(?P=quote)\s*:|(?<![\w-])--?(?P<option>[A-Za-z][\w-]{0,60})(?:=|\s)"""
                               rf"""|(?<![\w.-])(?P<assigned>[A-Za-z_][\w.]{{0,60}})=)\s*["']?(?P<value>[$€£¥￥]?(?:{NUMBER})(?:[kKmM]\b|万|千)?)""")


def _command_line(value: Any) -> str:
    """A command as one line: a string, or a list of arguments (["bash", "-lc", "curl …"])."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(item for item in value if isinstance(item, str))
    return ""


def _amounts_in_command(line: str) -> list[tuple[str, float]]:
    found = []
    for match in _KEYED_IN_COMMAND.finditer(line):
        key = match.group("quoted") or match.group("option") or match.group("assigned")
        if (amount := _amount(match.group("value"))) is not None:
            found.append((key, amount))
    return found


def _json_in(text: str) -> Any:
    """The JSON object or array ``text`` holds, if it is one."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
        return None


# Matched against a string stripped of its spaces, with no two runs of spaces on either side of an optional part: such
# runs share a long run of spaces every way they can (a string of 20,000 spaces took seconds), where a hook has 300 ms.
_NUMBER_TEXT = re.compile(rf"(?:[$€£¥￥]\s*|(?:{CURRENCY_CODES})\s+|(?:{CJK_CURRENCIES})\s*)?(-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)"
                          rf"(?:\s*([km]|万|千))?(?:\s*(?:元|{CJK_CURRENCIES}|{CURRENCY_WORDS}))?", re.IGNORECASE)
_CHINESE_NUMBER_TEXT = re.compile(rf"(?:(?:{CJK_CURRENCIES})\s*)?({CHINESE_NUMERAL})\s*(?:元|圆|块钱|块|{CJK_CURRENCIES})?整?")
AMOUNT_TEXT_CHARS = 100  # "USD 1,234,567.89", "人民币 壹万贰仟元整": a longer string is no amount, and is not matched


def _amount(value: Any) -> float | None:
    """A number, or a string that is one (a currency sign and thousands separators allowed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and len(value) <= AMOUNT_TEXT_CHARS:
        match = _NUMBER_TEXT.fullmatch(value.strip('"').strip())
        if match:
            try:
                return scaled(match.group(1), match.group(2))
            except ValueError:
                return None
        if chinese := _CHINESE_NUMBER_TEXT.fullmatch(value.strip()):
            return chinese_number(chinese.group(1))
    return None


# An input JSON cannot decode is searched for "key": value pairs string by string, each string matched once from its
# opening quote (to the end of the text, when it is not closed): a pattern that could start at any quote started again
# at each \" inside a long string, scanning the rest of it each time (a 100 kB string took tens of seconds).
_STRING = re.compile(r'"(?=((?:[^"\\]|\\.)*))\1(?:"|\\?\Z)', re.DOTALL)  # (a lookahead is never backtracked into)
_AFTER_KEY = re.compile(r'\s*:\s*("[^"\\]{1,40}"|-?\d[\d.eE+-]*)')


def _keyed_numbers(text: str) -> list[tuple[str, str]]:
    """Each ``"key": value`` pair of ``text`` whose value may be a number (one, or a short string), in one pass."""
    found = []
    quote = text.find('"')
    while quote != -1:
        string = _STRING.match(text, quote)
        end = string.end() if string is not None else quote + 1
        if string is not None and (value := _AFTER_KEY.match(text, end)):
            found.append((string.group(1), value.group(1)))
            end = value.end()
        quote = text.find('"', end)
    return found
