"""Stripe takes amounts in the currency's smallest unit: ``amount=45000`` with ``currency=usd`` is $450.00, with
``currency=jpy`` ¥45,000 (a zero-decimal currency), with ``currency=kwd`` 45.000 KWD (a three-decimal one). Compared in
whole units as a cap states them, a charge of $450 (45000) broke a cap of $500: every charge over a hundredth of a
cap did. A call is Stripe's only when it says so plainly: its tool is Stripe's MCP server's
(``mcp__stripe__…``, whose tools take cents), it names Stripe's API host, or it runs Stripe's CLI or SDK; a command
that merely mentions Stripe ("git commit -m 'stripe fix'") is not, since dividing by 100 wrongly lets a call through."""

from __future__ import annotations

import re

from ctxtop.context.audit.currencies import Currency
from ctxtop.context.audit.text_parts import matches_in_parts
from ctxtop.context.rules.patterns import KeywordGate

# https://docs.stripe.com/currencies#zero-decimal and #three-decimal
ZERO_DECIMAL = frozenset({"BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF"})
THREE_DECIMAL = frozenset({"BHD", "JOD", "KWD", "OMR", "TND"})

_STRIPE_TOOL = re.compile(r"(?i)(?:^|_)stripe(?:_|$)")
_STRIPE_CALL = re.compile(
    r"(?<![\w.-])api\.stripe\.com(?![\w.-])"  # its API's host (not api.stripe.com.example.net)
    r"|(?<![\w./-])stripe\s+(?:[a-z_]+\s+(?:create|update|capture|confirm|increment_authorization)\b|post\s)"  # its CLI
    r"|\bstripe(?:\.|::|->)\w+(?:\.|->)(?:\w+(?:\.|->))?(?:create|modify|update|capture|confirm)\s*\(",  # an SDK's call
    re.IGNORECASE)
# Every match of _STRIPE_CALL names Stripe: a text that does not is not searched (the pattern, tried at each character,
# took 0.7 s on a 10 MB input).
_NAMES_STRIPE = KeywordGate("stripe")


def sends_to_stripe(tool_name: str | None, text: str, part: int | None = None) -> bool:
    """Whether a call (its tool, its input's JSON text) goes to Stripe. ``part``: search only the first and last
    ``part`` characters of a longer text (``text_parts``; a call not seen as Stripe's is only judged the stricter)."""
    if tool_name and _STRIPE_TOOL.search(tool_name):
        return True
    if not _NAMES_STRIPE.may_match(text):
        return False
    return next(matches_in_parts(_STRIPE_CALL, text, part), None) is not None


def minor_unit_digits(currency: Currency | None) -> int:
    """How many decimal digits Stripe's amounts in ``currency`` carry: 2 unless it is known to be another."""
    if currency is None:
        return 2
    if currency.codes <= ZERO_DECIMAL:
        return 0
    return 3 if currency.codes <= THREE_DECIMAL else 2
