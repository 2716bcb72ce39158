"""Which currency an amount of money is in, as far as its writing says ("$", "EUR", "元", a call's ``currency`` field),
and whether two amounts may be in the same one: only those are compared. ctxtop knows no exchange rates, so 450 EUR
is neither over nor under a cap of $500: such a call is put to the user, not judged (``violations``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Currency:
    label: str  # as the views name it: "$", "¥", "EUR"
    codes: frozenset[str]  # the ISO codes it may be: "$" is any dollar, "¥" the yuan or the yen

    def may_be(self, other: Currency) -> bool:
        """Whether an amount in ``other`` may be in this currency (a dollar cap and an amount in CAD may: "$" says not whose)."""
        return not self.codes.isdisjoint(other.codes)


def _one(code: str) -> Currency:
    return Currency(code, frozenset({code}))


_DOLLAR = Currency("$", frozenset({"USD", "CAD", "AUD", "HKD", "SGD", "NZD"}))
_YUAN_OR_YEN = Currency("¥", frozenset({"CNY", "JPY"}))
_BY_MARK: dict[str, Currency] = {
    "$": _DOLLAR, "dollar": _DOLLAR, "dollars": _DOLLAR, "bucks": _DOLLAR,
    "us$": _one("USD"), "ca$": _one("CAD"), "c$": _one("CAD"), "au$": _one("AUD"), "a$": _one("AUD"), "nz$": _one("NZD"),
    "hk$": _one("HKD"), "s$": _one("SGD"),
    "¥": _YUAN_OR_YEN, "￥": _YUAN_OR_YEN,
    "€": _one("EUR"), "euro": _one("EUR"), "euros": _one("EUR"), "欧元": _one("EUR"),
    "£": _one("GBP"), "英镑": _one("GBP"),
    "rmb": _one("CNY"), "yuan": _one("CNY"), "元": _one("CNY"), "圆": _one("CNY"), "块": _one("CNY"), "块钱": _one("CNY"),
    "人民币": _one("CNY"),
    "美元": _one("USD"), "美金": _one("USD"), "日元": _one("JPY"), "港币": _one("HKD"), "港元": _one("HKD"),
}
_CODE = re.compile(r"[A-Za-z]{3}")


def currency_of(text: str | None) -> Currency | None:
    """The currency a sign, a word or a code names ("$", "euros", "元", "usd", "INR": any three letters in a currency
    field name one); None for no currency, or one not known."""
    if not text:
        return None
    mark = text.strip().lower()
    if mark in _BY_MARK:
        return _BY_MARK[mark]
    return _one(mark.upper()) if _CODE.fullmatch(mark) else None


# The fields of a call's input that say which currency its amounts are in ("currency", "currency_code", "币种").
_CURRENCY_KEY = re.compile(r"(?i)^(?:[a-z_]*currency(?:[_-]?code)?|ccy|curr|币种|货币)$")


@functools.lru_cache(maxsize=1024)  # (asked of every field holding a string of every object of a call's input)
def is_currency_key(key: str) -> bool:
    return bool(_CURRENCY_KEY.match(key))
