"""The amounts of money a tool call's input names, in whole units of their currency, each with how the call wrote it
and the currency it is in as far as the call says: the fields that hold an amount (``money_words.is_amount_key``), also
in a shell command or a request body held as a string (``command_amounts``), and what order lines cost (quantity × unit
price). An amount's currency is the one it is written in ("€450"), else the one its object's currency field names
({"amount": 450, "currency": "EUR"}, that of an object it is in too), else the one its command names."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ctxtop.context.audit.command_amounts import amounts_in_command, is_form, may_hold_keyed_amount, without_text_tools
from ctxtop.context.audit.currencies import Currency, currency_of, is_currency_key
from ctxtop.context.audit.money_words import AMOUNT_KEY_WORDS, CHINESE_NUMERAL, is_amount_key, key_words, written_amount
from ctxtop.context.audit.order_lines import line_total
from ctxtop.context.audit.stripe_units import minor_unit_digits, sends_to_stripe
from ctxtop.context.audit.text_parts import read_in_part
from ctxtop.parsers.numbers import bounded_int

# One decoder for every call (``json.loads`` with an option makes a new one each time).
_DECODER = json.JSONDecoder(parse_int=bounded_int)
# Every amount is written with a digit (of any script: ``float`` reads them all), a Chinese numeral, or as JSON's
# Infinity or NaN, or hides one in a JSON escape ("\u0035"): an input with none of these names none, and a quarter
# to a third of an agent's calls (reading files, listing folders) are such inputs.
_MAY_NAME_AN_AMOUNT = re.compile(rf"\d|\\u|{CHINESE_NUMERAL}|Infinity|NaN")


@dataclass(frozen=True, slots=True)
class CallAmount:
    written: str  # how the call wrote it: "amount_cents 160000 = 1600"
    value: float  # in whole units
    currency: Currency | None  # None: the call does not say


@dataclass(frozen=True, slots=True)
class _Found:
    key: str
    value: float
    written_in: str | None  # the currency sign or word the amount itself was written with ("€", "USD")
    scope: Currency | None  # the one its object or command names


def amounts_in(text: str, tool_name: str | None = None, part: int | None = None) -> tuple[list[CallAmount], bool]:
    """Each amount in a tool call's input (JSON text) in whole units, with how the call wrote it and its currency; and
    whether a shell command in it was read only in part: with ``part``, a command longer than twice that is read in
    its first and last ``part`` characters (``text_parts``)."""
    # An input with no amount key names no amount: most of them (two in three in generated sessions, nearly all in real
    # ones) are spared their decoding and walk. (Unless it is read in part: whether a command in it was is still to be
    # told.) Asked before the digits: it is the cheaper of the two, and the one that says no more often.
    if not read_in_part(len(text), part) and not AMOUNT_KEY_WORDS.may_match(text):
        return [], False
    if _MAY_NAME_AN_AMOUNT.search(text) is None:
        return [], False
    keyed, line_totals, cut = _numbers_by_key(text, part)
    stripe = sends_to_stripe(tool_name, text, part)
    return [_in_whole_units(found, stripe) for found in keyed if is_amount_key(found.key)] + line_totals, cut


# A field whose name says it counts a currency's hundredths ("amount_cents", "amountMinor", "price_in_pence") holds
# a hundred times the amount a cap states: 140000 cents are 1400, under a cap of 1500. One in millionths (Google
# Ads' "amount_micros", a budget's "budget_micros") a million times: 2500000000 micros are 2500.
_HUNDREDTHS_WORDS = frozenset({"cent", "cents", "minor", "pence", "penny", "pennies"})
_MILLIONTHS_WORDS = frozenset({"micro", "micros"})


def _fraction_digits(key: str) -> int:
    """How many decimal digits a field's name says its amount carries (0: whole units)."""
    words = key_words(key)
    if not _MILLIONTHS_WORDS.isdisjoint(words):
        return 6
    return 2 if not _HUNDREDTHS_WORDS.isdisjoint(words) else 0


def _in_whole_units(found: _Found, stripe: bool) -> CallAmount:
    """``stripe``: the call goes to Stripe, whose amounts are in the currency's smallest unit (``stripe_units``)."""
    currency = currency_of(found.written_in) or found.scope
    digits = _fraction_digits(found.key)
    # (An amount written as money, "€180", is in whole units; so is one with a fraction, "12.99": no count of cents has
    # one, and a Stripe MCP server of another maker's may take whole units.)
    if not digits and stripe and found.written_in is None and found.value.is_integer():
        digits = minor_unit_digits(currency)
    if not digits:
        return CallAmount(f"{found.key} {found.value:g}", found.value, currency)
    whole = found.value / 10**digits
    return CallAmount(f"{found.key} {found.value:g} = {whole:g}", whole, currency)


def _numbers_by_key(text: str, part: int | None = None) -> tuple[list[_Found], list[CallAmount], bool]:
    """Every number in a tool call's input (JSON text) with the key it is under, numbers written as strings
    ("900", "$1,200.50") too; and the totals of its order lines (``line_total``), each with how it was reckoned.
    An input JSON cannot decode whole — nested deeper than Python's decoder goes, an integer past its digit limit —
    is searched for "key": number pairs instead: nesting must not hide an amount."""
    try:
        data = _DECODER.decode(text)  # (NaN, Infinity and 1e999 as floats: over any cap but NaN)
    except (ValueError, RecursionError):
        return [_Found(key, *written, None) for key, raw in _keyed_numbers(text) if (written := written_amount(raw)) is not None], [], False
    found: list[_Found] = []
    line_totals: list[CallAmount] = []
    cut = False
    # (a node, the amount key it is under: an amount's list, or its {"currency_code", "value"} object; and the currency
    # its object, or one it is in, names)
    stack: list[tuple[Any, str | None, Currency | None]] = [(data, None, None)]
    while stack:
        node, under, scope = stack.pop()
        if isinstance(node, dict):
            scope = _currency_field(node) or scope
            for key, value in node.items():
                key = str(key)
                words = key_words(key)
                named: tuple[list[_Found], list[CallAmount], bool] = ([], [], False)
                if not words.isdisjoint(_COMMAND_WORDS) and (line := _command_line(value)):
                    named = _found_in_shell_command(line, scope, part)
                if isinstance(value, str) and not words.isdisjoint(_BODY_WORDS):
                    if (body := _json_in(value)) is not None:
                        stack.append((body, None, scope))
                    elif not named[0] and is_form(value):
                        named = _found_in_command(value, scope, part)
                found += named[0]
                line_totals += named[1]
                cut = cut or named[2]
                if isinstance(value, (dict, list)):
                    stack.append((value, key if is_amount_key(key) else None, scope))
                    continue
                # (A number under any other key than an amount's is no amount: ``amounts_in`` drops it, so it is not read.)
                amount_key = under if under is not None and key.lower() == "value" else key
                if is_amount_key(amount_key) and (written := written_amount(value)) is not None:
                    found.append(_Found(amount_key, *written, scope))
            if (priced := line_total(node)) is not None:
                line_totals.append(_priced(priced, scope))
        elif isinstance(node, list):
            stack.extend((item, under, scope) for item in node)
            found += [_Found(under, *written, scope) for item in node if under is not None and (written := written_amount(item)) is not None]
            lines = [priced for item in node if isinstance(item, dict) and (priced := line_total(item)) is not None]
            if len(lines) > 1:  # an order's lines: what it costs is their sum
                total = sum(line[1] for line in lines)
                line_totals.append(_priced((f"{len(lines)} lines' quantity × price summed = {total:g}", total, lines[0][2]), scope))
    return found, line_totals, cut


def _priced(priced: tuple[str, float, str | None], scope: Currency | None) -> CallAmount:
    return CallAmount(priced[0], priced[1], currency_of(priced[2]) or scope)


def _currency_field(node: dict[Any, Any]) -> Currency | None:
    for key, value in node.items():
        if isinstance(value, str) and is_currency_key(str(key)) and (currency := currency_of(value)) is not None:
            return currency
    return None


# A shell command's amounts are read only under such keys: a file a call writes may quote an order without placing one.
# A request body held as a string ("body": "{…}") is read as the JSON it is, or as the form it is.
_COMMAND_WORDS = frozenset({"command", "commands", "cmd", "script", "args", "argv"})
_BODY_WORDS = frozenset({"body", "data", "payload", "json", "params", "request", "arguments", "args", "variables"})


def _command_line(value: Any) -> str:
    """A command as one line: a string, or a list of arguments; a shell's script (["bash", "-lc", "curl …"], as Codex
    runs commands) is the command it runs, whose programs tell text from payments (``without_text_tools``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        words = [item for item in value if isinstance(item, str)]
        if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in ("-c", "-lc", "-ic"):
            return words[2]
        return " ".join(words)
    return ""


_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})


def _found_in_command(line: str, scope: Currency | None, part: int | None) -> tuple[list[_Found], list[CallAmount], bool]:
    """The amounts a command (or a form body) names, what its order line costs, and whether it was read only in part."""
    named = amounts_in_command(line, part)
    currencies = [currency for code in named.currencies if (currency := currency_of(code)) is not None]
    if currencies:  # (a command that names two: its amounts may be in either)
        scope = Currency("/".join(dict.fromkeys(c.label for c in currencies)), frozenset().union(*(c.codes for c in currencies)))
    found = [_Found(key, value, written_in, scope) for key, value, written_in in named.keyed]
    return found, [_priced(named.line_total, scope)] if named.line_total is not None else [], named.cut


def _found_in_shell_command(line: str, scope: Currency | None, part: int | None) -> tuple[list[_Found], list[CallAmount], bool]:
    """``_found_in_command`` of a shell command, its pipelines of text tools blanked out (``without_text_tools``).
    (One that names no amount, as most do, is not blanked first: the same nothing, read in part or not.)"""
    if not may_hold_keyed_amount(line):
        return [], [], read_in_part(len(line), part)
    return _found_in_command(without_text_tools(line), scope, part)


def _json_in(text: str) -> Any:
    """The JSON object or array ``text`` holds, if it is one."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
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
