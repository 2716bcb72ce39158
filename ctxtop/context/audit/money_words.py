"""How money is written: currencies, numbers with their scale, Chinese numerals, and the names of the fields
that hold an amount. What the rules' caps (``money_caps``) and the tool calls' amounts (``call_amounts``) share."""

from __future__ import annotations

import functools
import re

from ctxtop.context.rules.patterns import KeywordGate, any_of

# A key names an amount by one of its words ("amount", "refund_amount", "totalPrice", "subtotal"; Chinese keys have
# no words to split): not by a part of one ("checksum", "summary_id"), nor when another word says what it counts
# ("total_tokens", "budget_tokens", "total_lines", "cost_ms"): such a number is no money.
_AMOUNT_WORDS = frozenset({"amount", "amounts", "total", "totals", "subtotal", "grandtotal", "price", "prices", "cost", "costs",
                           "budget", "sum"})
_CJK_AMOUNT_KEY_WORDS = ("金额", "总价", "总额", "费用", "价格", "单价")
_CJK_AMOUNT_KEYS = re.compile(any_of(_CJK_AMOUNT_KEY_WORDS))
_NOT_MONEY_WORDS = frozenset({"token", "tokens", "line", "lines", "count", "counts", "page", "pages", "id", "ids",
                              "ms", "sec", "secs", "seconds", "minutes", "hours", "days", "bytes", "kb", "mb", "gb", "percent",
                              "pct", "ratio", "rate", "qty", "quantity", "words", "chars", "characters", "steps", "retries"})
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # snake_case, kebab-case, camelCase and CAPS split alike


@functools.lru_cache(maxsize=4096)  # (a log's calls use a few hundred field names, over and over)
def key_words(key: str) -> frozenset[str]:
    """The words of a field's name, lower-cased: ``refund_amount``, ``totalPrice``, ``TOTAL-COST`` alike."""
    return frozenset(word.lower() for word in _KEY_WORD.findall(key))


@functools.lru_cache(maxsize=1024)
def is_amount_key(key: str) -> bool:
    """Whether a field named ``key`` holds an amount of money."""
    if _CJK_AMOUNT_KEYS.search(key):
        return True
    words = key_words(key)
    return not words.isdisjoint(_AMOUNT_WORDS) and words.isdisjoint(_NOT_MONEY_WORDS)


# Every amount key (``is_amount_key``) holds one of these words as a run of its ASCII letters, in some case, or a
# Chinese amount key as it is; and a call's JSON text holds the letters of its keys as they are (JSON escapes only
# "\u0061" into a letter), also those of a JSON body or a command held in one of its strings. A text with none of them
# and no "\u" has no amount key, so names no amount (an order line's price is under one too), whatever digits it holds.
AMOUNT_KEY_WORDS = KeywordGate(*sorted(_AMOUNT_WORDS), *_CJK_AMOUNT_KEY_WORDS, "\\u")


NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 8000, 8,000, 12.5 (not "8000," as in "cap 8000, stop")
CURRENCY_CODES = r"usd|eur|gbp|rmb|cny|jpy|hkd|cad|aud|chf|sgd"  # written before or after an amount
CURRENCY_WORDS = rf"{CURRENCY_CODES}|dollars?|euros?|yuan|bucks"  # written after it
# The dollars written with their country before the sign: "US$180", "C$95", "HK$500" (``currencies`` names them).
DOLLAR_COUNTRIES = "(?:US|CA|C|AU|A|NZ|HK|S)"
CJK_CURRENCIES = r"人民币|美元|美金|欧元|英镑|日元|港币|港元"  # written before or after it
# Amounts written in Chinese numerals, plain (五千, 一万二千, 三千五) or as invoices write them (壹万贰仟): "超过五千元",
# "九千元". A run of numerals counts as a number only with a digit or 十 in it ("千元" alone is no amount).
_CHINESE_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "两": 2, "三": 3, "叁": 3, "四": 4, "肆": 4, "五": 5, "伍": 5,
                   "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
_CHINESE_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CHINESE_SECTIONS = {"万": 10_000, "萬": 10_000, "亿": 100_000_000}
# (Up to 32: "一亿二千三百四十五万六千七百八十九" is 17, and an amount not read is a call over the cap let through.)
CHINESE_NUMERAL = "[" + "".join([*_CHINESE_DIGITS, *_CHINESE_UNITS, *_CHINESE_SECTIONS]) + "]{1,32}"


def chinese_number(text: str) -> float | None:
    """``"五千"`` → 5000.0, ``"一万二千"`` → 12000.0, ``"三千五"`` → 3500.0 (a digit after a unit is a tenth of it);
    None when ``text`` is not a number so written."""
    total = section = digit = biggest = 0
    last_unit, after_zero, seen = 0, False, False
    for char in text:
        if char in _CHINESE_DIGITS:
            digit, seen = _CHINESE_DIGITS[char], seen or char not in "零〇"
            after_zero = after_zero or char in "零〇"
        elif char in _CHINESE_UNITS:
            unit = _CHINESE_UNITS[char]
            seen = seen or unit == 10
            section += (digit or (1 if unit == 10 else 0)) * unit
            digit, last_unit, after_zero = 0, unit, False
        elif char in _CHINESE_SECTIONS:
            scale = _CHINESE_SECTIONS[char]
            if scale > biggest:  # 一万亿: ten thousand of a hundred million, not ten thousand and then none
                total, biggest = (total + section + digit) * scale, scale
            else:
                total += (section + digit) * scale
            section = digit = 0
            last_unit, after_zero = scale, False
        else:
            return None
    if not seen:
        return None
    if digit and last_unit >= 100 and not after_zero:  # 三千五: five hundred; 一千零五: five
        digit *= last_unit // 10
    return float(total + section + digit)



_SCALE = {"k": 1e3, "m": 1e6, "千": 1e3, "万": 1e4}


def scaled(number: str, scale: str | None) -> float:
    """``"1,200"`` → 1200.0; ``"5", "k"`` → 5000.0."""
    return float(number.replace(",", "")) * _SCALE.get((scale or "").lower(), 1)


# Matched against a string stripped of its spaces, with no two runs of spaces on either side of an optional part: such
# runs share a long run of spaces every way they can (a string of 20,000 spaces took seconds), where a hook has 300 ms.
_NUMBER_TEXT = re.compile(rf"(?:(?P<sign>{DOLLAR_COUNTRIES}\$|[$€£¥￥])\s*|(?P<code>{CURRENCY_CODES})\s+|(?P<cjk>{CJK_CURRENCIES})\s*)?"
                          rf"(?P<number>-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)"
                          rf"(?:\s*(?P<scale>[km]|万|千))?(?:\s*(?P<after>元|{CJK_CURRENCIES}|{CURRENCY_WORDS}))?", re.IGNORECASE)
_CHINESE_NUMBER_TEXT = re.compile(rf"(?:(?P<before>{CJK_CURRENCIES})\s*)?(?P<number>{CHINESE_NUMERAL})\s*(?P<after>元|圆|块钱|块|{CJK_CURRENCIES})?整?")
AMOUNT_TEXT_CHARS = 100  # "USD 1,234,567.89", "人民币 壹万贰仟元整": a longer string is no amount, and is not matched


def written_amount(value: object) -> tuple[float, str | None] | None:
    """A number, or a string that is one (a currency sign and thousands separators allowed), with the currency it
    was written in ("$", "EUR", "元"; None: written in none)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value), None
    if isinstance(value, str) and len(value) <= AMOUNT_TEXT_CHARS:
        match = _NUMBER_TEXT.fullmatch(value.strip('"').strip())
        if match:
            try:
                currency = match.group("sign") or match.group("code") or match.group("cjk") or match.group("after")
                return scaled(match.group("number"), match.group("scale")), currency
            except ValueError:
                return None
        if chinese := _CHINESE_NUMBER_TEXT.fullmatch(value.strip()):
            number = chinese_number(chinese.group("number"))
            return (number, chinese.group("before") or chinese.group("after")) if number is not None else None
    return None


def number_in(value: object) -> float | None:
    """``written_amount`` without its currency: a quantity's number."""
    written = written_amount(value)
    return written[0] if written is not None else None

