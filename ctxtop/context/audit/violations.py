"""Tool calls that break a rule: a forbidden pattern or channel, protected data, an amount over a cap."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.rules.facts import NEGATIONS
from ctxtop.context.rules.forbid import SEARCH_SECONDS, ForbidError, forbid_pattern
from ctxtop.context.sanitize import quoted
from ctxtop.parsers.model import TOOL_CALL, Block, Entry
from ctxtop.parsers.numbers import bounded_int

PHONE = re.compile(r"(?<!\d)(?:\+?86[- ]?)?1[3-9]\d(?:[- ]?\d{4}){2}(?!\d)|\+\d{1,3}[ -]?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{3,4}")
# A key names an amount by one of its words ("amount", "refund_amount", "totalPrice", "subtotal"; Chinese keys have
# no words to split): not by a part of one ("checksum", "summary_id"), nor when another word says what it counts
# ("total_tokens", "budget_tokens", "total_lines", "cost_ms"): such a number is no money.
_AMOUNT_WORDS = frozenset({"amount", "amounts", "total", "totals", "subtotal", "grandtotal", "price", "prices", "cost", "costs",
                           "budget", "sum"})
_CJK_AMOUNT_KEYS = re.compile(r"金额|总价|总额|费用|价格|单价")
_NOT_MONEY_WORDS = frozenset({"token", "tokens", "line", "lines", "count", "counts", "page", "pages", "id", "ids",
                              "ms", "sec", "secs", "seconds", "minutes", "hours", "days", "bytes", "kb", "mb", "gb", "percent",
                              "pct", "ratio", "rate", "qty", "quantity", "words", "chars", "characters", "steps", "retries"})
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # snake_case, kebab-case, camelCase and CAPS split alike


def _words(key: str) -> frozenset[str]:
    return frozenset(word.lower() for word in _KEY_WORD.findall(key))


@functools.lru_cache(maxsize=1024)
def is_amount_key(key: str) -> bool:
    """Whether a field named ``key`` holds an amount of money."""
    if _CJK_AMOUNT_KEYS.search(key):
        return True
    words = _words(key)
    return not words.isdisjoint(_AMOUNT_WORDS) and words.isdisjoint(_NOT_MONEY_WORDS)


# A cap is judged against the amounts of a call (``is_amount_key``) only when it is on money: an amount written as
# money ("$500", "8000 元", "1万元", "$5k") near a cap word, or a cap word near money words whose number counts no
# other thing ("budget cap 8000"; not "no more than 3 retries of a refund", "budget: 5 minutes", "不超过3次").
_CAP_WORDS = re.compile(r"上限|不超过|超过|高于|最多|封顶|以内|\b(?:caps?|capped|limits?|at most|no more than|more than|exceed(?:s|ing)?|"
                        r"under|below|over|above|beyond|up to|budget|ceiling|threshold|max(?:imum)?)\b|预算", re.IGNORECASE)
# (After an amount: "$500 max", "1万以内", "500 元以下"; "$750 or more" names what needs asking, and so caps the amount at it.)
_CAP_AFTER = re.compile(r"\s*(?:\b(?:max(?:imum)?|at most|or (?:less|below|under)|tops|or more|or above|or higher|and (?:up|above))\b"
                        r"|上限|以内|及?以下|封顶|及?以上)", re.IGNORECASE)
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"  # 8000, 8,000, 12.5 (not "8000," as in "cap 8000, stop")
_CURRENCY_CODES = r"usd|eur|gbp|rmb|cny|jpy|hkd|cad|aud|chf|sgd"  # written before or after an amount
_CURRENCY_WORDS = rf"{_CURRENCY_CODES}|dollars?|euros?|yuan|bucks"  # written after it
_CJK_CURRENCIES = r"人民币|美元|美金|欧元|英镑|日元|港币|港元"  # written before or after it
# Amounts written in Chinese numerals, plain (五千, 一万二千, 三千五) or as invoices write them (壹万贰仟): "超过五千元",
# "九千元". A run of numerals counts as a number only with a digit or 十 in it ("千元" alone is no amount).
_CHINESE_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "两": 2, "三": 3, "叁": 3, "四": 4, "肆": 4, "五": 5, "伍": 5,
                   "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
_CHINESE_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CHINESE_SECTIONS = {"万": 10_000, "萬": 10_000, "亿": 100_000_000}
_CHINESE_NUMERAL = "[" + "".join([*_CHINESE_DIGITS, *_CHINESE_UNITS, *_CHINESE_SECTIONS]) + "]{1,16}"


def chinese_number(text: str) -> float | None:
    """``"五千"`` → 5000.0, ``"一万二千"`` → 12000.0, ``"三千五"`` → 3500.0 (a digit after a unit is a tenth of it);
    None when ``text`` is not a number so written."""
    total = section = digit = 0
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
            total += (section + digit) * _CHINESE_SECTIONS[char]
            section = digit = 0
            last_unit, after_zero = _CHINESE_SECTIONS[char], False
        else:
            return None
    if not seen:
        return None
    if digit and last_unit >= 100 and not after_zero:  # 三千五: five hundred; 一千零五: five
        digit *= last_unit // 10
    return float(total + section + digit)


_MONEY_NUMBER = re.compile(
    rf"(?:[$€£¥￥]|\b(?:{_CURRENCY_CODES})\s?|{_CJK_CURRENCIES})\s*(?P<a>{_NUMBER})\s?(?P<sa>[km]\b|万|千)?"
    rf"|(?P<b>{_NUMBER})\s?(?P<sb>[km]|万|千)?\s?(?:元|块钱|块|{_CJK_CURRENCIES}|\b(?:{_CURRENCY_WORDS})\b)"
    rf"|(?P<c>{_CHINESE_NUMERAL})(?:元|圆|块钱|{_CJK_CURRENCIES})", re.IGNORECASE)  # (not 块: "一块" is also "together")
_SCALE = {"k": 1e3, "m": 1e6, "千": 1e3, "万": 1e4}
_CAP = re.compile(r"(?:上限|cap|limit|at most|more than|exceed(?:s|ing)?|\bover\b|\babove\b|\bbeyond\b|ceiling|threshold|不超过|超过|高于|budget|"
                  r"预算|max(?:imum)?)\D{0,12}"
                  rf"({_NUMBER})(?:\s?([km]\b|万|千))?", re.IGNORECASE)
MONEY_BEFORE_CAP, MONEY_AFTER_NUMBER, CAP_BEFORE_MONEY = 24, 8, 40
_MONEY = re.compile(rf"[$€£¥￥]|\b(?:{_CURRENCY_WORDS}|budget|spend(?:ing)?|costs?|price|refunds?|amounts?|"
                    r"pay(?:ments?)?|charges?|purchases?|invoices?|orders?)\b|元|块钱|预算|金额|费用|花费|退款|支付|价格|付款", re.IGNORECASE)
# The money words that name an amount, not a thing that can be counted ("refunds", "orders"): a cap near them is on
# money even when a word such as "per" follows its number ("budget cap 500 per order", "never pay more than 250
# without asking"), where "limit refunds to 3 per day" counts refunds.
_MONEY_AMOUNT = re.compile(rf"[$€£¥￥]|\b(?:{_CURRENCY_WORDS}|budget|spend(?:ing)?|costs?|price|amounts?|pay)\b|元|块钱|预算|金额|费用|花费|价格",
                           re.IGNORECASE)
_NOT_A_UNIT = re.compile(r"\s*(?:per|each|a|an|for|without|on|in|at|to|and|or|before|unless|then|total|every)\b", re.IGNORECASE)
# What a capped number counts when it is no money: a word after it ("3 retries", "5 refunds per day", "10 pages"),
# a percentage, a Chinese measure word; a year ("budget 2025 planning"). Currency words and scales are money's.
_OTHER_UNIT = re.compile(r"\s*(?:%|次|个|件|条|份|笔|项|页|行|字|人|台|张|篇|轮|遍|步|位|周|月|分钟|小时|天|秒|毫秒|年|"
                         rf"(?!(?:{_CURRENCY_WORDS})\b)[A-Za-z]{{2,}})", re.IGNORECASE)


def implied_checks(constraint: Constraint) -> list[tuple[str, Any]]:
    """What a constraint's own words forbid, beyond its explicit ``forbid`` patterns."""
    text = constraint.text
    lowered = text.casefold()
    negated = any(word in lowered for word in NEGATIONS)
    checks: list[tuple[str, Any]] = []
    for pattern in constraint.forbid:
        try:
            checks.append(("pattern", forbid_pattern(pattern)))
        except ForbidError:
            continue  # a pins file's patterns are checked when it is read; one from elsewhere that fails is not used
    if negated and re.search(r"邮件|e-?mail", lowered):
        checks.append(("tool_name", re.compile(r"(?i)e-?mail|邮件|smtp")))
    if negated and re.search(r"手机号|电话|phone", lowered):
        checks.append(("phone", PHONE))
    cap = _money_cap(text)
    if cap is not None:
        checks.append(("cap", cap))
    return checks


def _money_cap(text: str) -> float | None:
    """The first cap in ``text`` on an amount of money, if it states one."""
    for money in _MONEY_NUMBER.finditer(text):
        if money.group("c") and (amount := chinese_number(money.group("c"))) is None:
            continue
        if _CAP_WORDS.search(text, max(0, money.start() - CAP_BEFORE_MONEY), money.start()) or _CAP_AFTER.match(text, money.end()):
            if money.group("c"):
                return amount
            return _scaled(*((money.group("a"), money.group("sa")) if money.group("a") else (money.group("b"), money.group("sb"))))
    for cap in _CAP.finditer(text):
        start, end = max(0, cap.start() - MONEY_BEFORE_CAP), cap.end() + MONEY_AFTER_NUMBER
        if not _OTHER_UNIT.match(text, cap.end()):
            on_money = _names_money(text, start, end, _MONEY)
        elif _NOT_A_UNIT.match(text, cap.end()):
            on_money = _names_money(text, start, end, _MONEY_AMOUNT)
        else:
            continue
        if on_money:
            return _scaled(cap.group(1), cap.group(2))
    return None


# A budget of something else than money: "a token budget of 8000", "error budget", "上下文预算上限 8000".
_NOT_MONEY_BUDGET = re.compile(r"(?:\b(?:tokens?|time|error|memory|context|latency|retry|page|word|character)[\s-]*|(?:token|上下文|时间|内存|字数|篇幅)\s*)"
                               r"(?:budget|预算)", re.IGNORECASE)
_BUDGET_QUALIFIER_CHARS = 16
# A thing named after money is no amount of it: "the price list", "the cost dashboard", "the budget doc".
_NAMED_AFTER_MONEY = re.compile(r"[\s-]+(?:lists?|pages?|tables?|sheets?|spreadsheets?|docs?|documents?|reports?|files?|api|endpoints?|"
                                r"services?|modules?|dashboards?|meetings?|reviews?|planning|templates?|tabs?|pdfs?)\b|文档|页面|报表|表格|会议",
                                re.IGNORECASE)


def _names_money(text: str, start: int, end: int, words: re.Pattern[str]) -> bool:
    """Whether ``text[start:end]`` has a money word (one of ``words``) that names an amount of money: not a budget of
    something else, nor a thing named after money."""
    for word in words.finditer(text, start, end):
        before = max(0, word.start() - _BUDGET_QUALIFIER_CHARS)
        if any(other.end() == word.end() for other in _NOT_MONEY_BUDGET.finditer(text, before, word.end())):
            continue
        if not word.group().isalpha() or not _NAMED_AFTER_MONEY.match(text, word.end()):
            return True
    return False


def _scaled(number: str, scale: str | None) -> float:
    """``"1,200"`` → 1200.0; ``"5", "k"`` → 5000.0."""
    return float(number.replace(",", "")) * _SCALE.get((scale or "").lower(), 1)


def violations(entries: Iterable[Entry], constraints: list[Constraint]) -> list[Alert]:
    alerts: list[Alert] = []
    checks = checks_of(constraints)
    if not checks:
        return alerts
    for entry in entries:
        for block in entry.blocks:
            if block.category == TOOL_CALL:
                alerts += violations_of(entry.index, block, block.text, checks)
    return alerts


def checks_of(constraints: list[Constraint]) -> list[tuple[Constraint, list[tuple[str, Any]]]]:
    """The constraints a tool call can break, with what to check of it."""
    return [(c, checks) for c in constraints if (checks := implied_checks(c))]


def violations_of(message: int, block: Block, text: str, checks: list[tuple[Constraint, list[tuple[str, Any]]]]) -> list[Alert]:
    alerts = []
    # (Parsed once for every constraint, not once each; the key tells this call from the others of
    # the same message, so that a pattern that ran out of time is noted at the one call where it did.)
    call = _Input(text, f"{message}:{block.tool_id or block.tool_name}:{len(text)}")
    for constraint, implied in checks:
        if constraint.first_stated is not None and message <= constraint.first_stated:
            continue
        detail = _violation(implied, block.tool_name or "", call, message)
        if detail:
            alerts.append(Alert(AlertKind.VIOLATION, message, None, constraint.id, f"{block.tool_name or 'tool call'}: {detail}"))
        for kind, check in implied:
            if kind == "pattern" and check.timed_out_on == call.key:
                alerts.append(Alert(AlertKind.FORBID_SKIPPED, message, None, constraint.id,
                                    f"forbid pattern {quoted(check.pattern)} took longer than {SEARCH_SECONDS:g} s on this "
                                    f"{block.tool_name or 'tool'} call: not checked here or after"))
    return alerts


class _Input:
    """A tool call's input, with its amounts found only if a cap asks, and then once."""

    __slots__ = ("text", "key", "_amounts")

    def __init__(self, text: str, key: str) -> None:
        self.text, self.key = text, key
        self._amounts: list[tuple[str, float]] | None = None

    def amounts(self) -> list[tuple[str, float]]:
        """Each amount in whole units of its currency, with how the call wrote it ("amount_cents 160000 = 1600")."""
        if self._amounts is None:
            keyed, line_totals = _numbers_by_key(self.text)
            self._amounts = [_in_whole_units(key, value) for key, value in keyed if is_amount_key(key)] + line_totals
        return self._amounts


# A field whose name says it counts a currency's hundredths ("amount_cents", "amountMinor", "price_in_pence") holds
# a hundred times the amount a cap states: 140000 cents are 1400, under a cap of 1500.
_HUNDREDTHS_WORDS = frozenset({"cent", "cents", "minor", "pence", "penny", "pennies"})


def _in_whole_units(key: str, value: float) -> tuple[str, float]:
    if _HUNDREDTHS_WORDS.isdisjoint(_words(key)):
        return f"{key} {value:g}", value
    return f"{key} {value:g} = {value / 100:g}", value / 100


def _violation(checks: list[tuple[str, Any]], name: str, call: _Input, message: int) -> str | None:
    text = call.text
    for kind, check in checks:
        if kind == "pattern" and check.matches(message, name, text, call=call.key):
            return f"matches forbidden pattern {quoted(check.pattern)}"
        if kind == "tool_name" and check.search(name):
            return "uses a forbidden channel"
        if kind == "phone":
            match = check.search(text)
            if match:
                return f"input contains a phone number ({match.group(0)[:3]}…)"
        if kind == "cap":
            for written, value in call.amounts():
                if value > check:
                    return f"{written} exceeds the cap {check:g}"
    return None


def _numbers_by_key(text: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """Every number in a tool call's input (JSON text) with the key it is under, numbers written as strings
    ("900", "$1,200.50") too; and the totals of its order lines (``_line_total``), each with how it was reckoned.
    An input JSON cannot decode whole — nested deeper than Python's decoder goes, an integer past its digit limit —
    is searched for "key": number pairs instead: nesting must not hide an amount."""
    try:
        data = json.loads(text, parse_int=bounded_int)  # (NaN, Infinity and 1e999 as floats: over any cap but NaN)
    except (ValueError, RecursionError):
        return [(key, value) for key, raw in _KEYED_NUMBER.findall(text) if (value := _amount(raw)) is not None], []
    found = []
    line_totals = []
    # (a node, and the amount key it is under: an amount's list, or its {"currency_code", "value"} object)
    stack: list[tuple[Any, str | None]] = [(data, None)]
    while stack:
        node, under = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                key = str(key)
                words = _words(key)
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
        words = _words(key)
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
                               rf"""|(?<![\w.-])(?P<assigned>[A-Za-z_][\w.]{{0,60}})=)\s*["']?(?P<value>[$€£¥￥]?(?:{_NUMBER})(?:[kKmM]\b|万|千)?)""")


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
        return json.loads(text, parse_int=bounded_int)
    except (ValueError, RecursionError):
        return None


_NUMBER_TEXT = re.compile(rf"\s*(?:[$€£¥￥]|(?:{_CURRENCY_CODES})\s|{_CJK_CURRENCIES})?\s*(-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)\s*([km]|万|千)?\s*"
                          rf"(?:元|{_CJK_CURRENCIES}|{_CURRENCY_WORDS})?\s*", re.IGNORECASE)
_CHINESE_NUMBER_TEXT = re.compile(rf"\s*(?:{_CJK_CURRENCIES})?\s*({_CHINESE_NUMERAL})\s*(?:元|圆|块钱|块|{_CJK_CURRENCIES})?整?\s*")
_KEYED_NUMBER = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*("[^"\\]{1,40}"|-?\d[\d.eE+-]*)')


def _amount(value: Any) -> float | None:
    """A number, or a string that is one (a currency sign and thousands separators allowed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = _NUMBER_TEXT.fullmatch(value.strip('"'))
        if match:
            try:
                return _scaled(match.group(1), match.group(2))
            except ValueError:
                return None
        if chinese := _CHINESE_NUMBER_TEXT.fullmatch(value):
            return chinese_number(chinese.group(1))
    return None
