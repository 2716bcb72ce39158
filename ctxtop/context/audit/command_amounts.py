"""The amounts a shell command names, and the currency it names them in.

A command's amounts are the ones it names, as a JSON body (curl -d '{"amount": 450}'), an option (--amount 3100,
--amount=1800) or an assignment (amount=450 in a form field, a query string, an environment variable); its other
numbers (PIDs, ports, line ranges, timestamps) are no money."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ctxtop.context.audit.money_words import NUMBER, written_amount

_KEYED_IN_COMMAND = re.compile(r"""(?:(?P<quote>["'])(?P<quoted>[^"'\s:]{1,60})(?P=quote)\s*:|(?<![\w-])--?(?P<option>[A-Za-z][\w-]{0,60})(?:=|\s)"""
                               rf"""|(?<![\w.-])(?P<assigned>[A-Za-z_][\w.]{{0,60}})=)\s*["']?(?P<value>[$€£¥￥]?(?:{NUMBER})(?:[kKmM]\b|万|千)?)""")
# The currency a command names its amounts in: currency=usd, --currency USD, "currency": "EUR", currency: 'jpy'.
_CURRENCY_IN_COMMAND = re.compile(r"""(?i)(?<![\w-])-{0,2}["']?[a-z_]{0,30}currency(?:[_-]?code)?["']?\s?(?::=|[:=\s])\s?["']?"""
                                  r"""(?P<code>[a-z]{3})(?![\w-])""")


@dataclass(slots=True)
class CommandAmounts:
    keyed: list[tuple[str, float, str | None]] = field(default_factory=list)  # (key, amount, the currency it was written in)
    currencies: list[str] = field(default_factory=list)  # the currencies it names for its amounts (``currency=usd``)


def amounts_in_command(line: str) -> CommandAmounts:
    found = CommandAmounts()
    for match in _KEYED_IN_COMMAND.finditer(line):
        key = match.group("quoted") or match.group("option") or match.group("assigned")
        if (written := written_amount(match.group("value"))) is not None:
            found.keyed.append((key, *written))
    found.currencies = [match.group("code") for match in _CURRENCY_IN_COMMAND.finditer(line)]
    return found
