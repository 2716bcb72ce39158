"""Whether a rule caps an amount of money, and at how much: "budget cap 8000 USD per order", "$500 max",
"预算上限 8000 元", "超过五千元先问我" — not "at most 3 retries", "a token budget of 8000", "the price list"."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxtop.context.audit.currencies import Currency, currency_of
from ctxtop.context.audit.money_words import CHINESE_NUMERAL, CJK_CURRENCIES, CURRENCY_CODES, CURRENCY_WORDS, NUMBER, chinese_number, scaled

# A cap is judged against the amounts of a call (``is_amount_key``) only when it is on money: an amount written as
# money ("$500", "8000 元", "1万元", "$5k") near a cap word, or a cap word near money words whose number counts no
# other thing ("budget cap 8000"; not "no more than 3 retries of a refund", "budget: 5 minutes", "不超过3次").
_CAP_WORDS = re.compile(r"上限|不超过|超过|高于|最多|封顶|以内|\b(?:caps?|capped|limits?|at most|no more than|more than|exceed(?:s|ing)?|"
                        r"under|below|over|above|beyond|up to|budget|ceiling|threshold|max(?:imum)?)\b|预算", re.IGNORECASE)
# (After an amount: "$500 max", "1万以内", "500 元以下"; "$750 or more" names what needs asking, and so caps the amount at it.)
_CAP_AFTER = re.compile(r"\s*(?:\b(?:max(?:imum)?|at most|or (?:less|below|under)|tops|or more|or above|or higher|and (?:up|above))\b"
                        r"|上限|以内|及?以下|封顶|及?以上)", re.IGNORECASE)
# (A number written as money starts where its digits do: tried at each digit of a long run, it scanned the rest of the
# run each time, and 100,000 digits took minutes.)
# (Each with its currency: ``ma``, ``mb``, ``mc``.)
_MONEY_NUMBER = re.compile(
    rf"(?P<ma>[$€£¥￥]|\b(?:{CURRENCY_CODES})|{CJK_CURRENCIES})\s*(?P<a>{NUMBER})\s?(?P<sa>[km]\b|万|千)?"
    rf"|(?<![\d,])(?P<b>{NUMBER})\s?(?P<sb>[km]|万|千)?\s?(?P<mb>元|块钱|块|{CJK_CURRENCIES}|\b(?:{CURRENCY_WORDS})\b)"
    rf"|(?P<c>{CHINESE_NUMERAL})(?P<mc>元|圆|块钱|{CJK_CURRENCIES})", re.IGNORECASE)  # (not 块: "一块" is also "together")
_CAP = re.compile(r"(?:上限|cap|limit|at most|more than|exceed(?:s|ing)?|\bover\b|\babove\b|\bbeyond\b|ceiling|threshold|不超过|超过|高于|budget|"
                  r"预算|max(?:imum)?)\D{0,12}"
                  rf"({NUMBER})(?:\s?([km]\b|万|千))?", re.IGNORECASE)
MONEY_BEFORE_CAP, MONEY_AFTER_NUMBER, CAP_BEFORE_MONEY = 24, 8, 40
_MONEY = re.compile(rf"[$€£¥￥]|\b(?:{CURRENCY_WORDS}|budget|spend(?:ing)?|costs?|price|refunds?|amounts?|"
                    r"pay(?:ments?)?|charges?|purchases?|invoices?|orders?|transfers?)\b|元|块钱|预算|金额|费用|花费|退款|支付|价格|付款", re.IGNORECASE)
# The money words that name an amount, not a thing that can be counted ("refunds", "orders"): a cap near them is on
# money even when a word such as "per" follows its number ("budget cap 500 per order", "never pay more than 250
# without asking"), where "limit refunds to 3 per day" counts refunds.
_MONEY_AMOUNT = re.compile(rf"[$€£¥￥]|\b(?:{CURRENCY_WORDS}|budget|spend(?:ing)?|costs?|price|amounts?|pay|transfer)\b|元|块钱|预算|金额|费用|花费|价格",
                           re.IGNORECASE)
_NOT_A_UNIT = re.compile(r"\s*(?:per|each|a|an|for|without|on|in|at|to|and|or|before|unless|then|total|every)\b", re.IGNORECASE)
# A verb after the number: it counts nothing, and what it caps is named before it ("any purchase over 1000 needs my
# approval", "refunds above 250 require a manager"), where "3 retries" counts retries.
_VERB_AFTER = re.compile(r"\s*(?:needs?|requires?|must|should|shall|has\s+to|have\s+to|is|are|gets?|goes)\b", re.IGNORECASE)
# What a capped number counts when it is no money: a word after it ("3 retries", "5 refunds per day", "10 pages"),
# a percentage, a Chinese measure word; a year ("budget 2025 planning"). Currency words and scales are money's.
_OTHER_UNIT = re.compile(r"\s*(?:%|次|个|件|条|份|笔|项|页|行|字|人|台|张|篇|轮|遍|步|位|周|月|分钟|小时|天|秒|毫秒|年|"
                         rf"(?!(?:{CURRENCY_WORDS})\b)[A-Za-z]{{2,}})", re.IGNORECASE)



@dataclass(frozen=True, slots=True)
class MoneyCap:
    amount: float
    # What the rule wrote the amount in; None when it names no currency ("budget cap 8000"): then the call's
    # amounts are taken to be in it, whatever theirs (the rule's writer pays in one currency, and did not say it).
    currency: Currency | None


def money_cap(text: str) -> MoneyCap | None:
    """The first cap in ``text`` on an amount of money, if it states one."""
    for money in _MONEY_NUMBER.finditer(text):
        amount = chinese_number(money.group("c")) if money.group("c") else None
        if money.group("c") and amount is None:
            continue
        if _CAP_WORDS.search(text, max(0, money.start() - CAP_BEFORE_MONEY), money.start()) or _CAP_AFTER.match(text, money.end()):
            currency = currency_of(money.group("ma") or money.group("mb") or money.group("mc"))
            if amount is not None:
                return MoneyCap(amount, currency)
            number = (money.group("a"), money.group("sa")) if money.group("a") else (money.group("b"), money.group("sb"))
            return MoneyCap(scaled(*number), currency)
    for cap in _CAP.finditer(text):
        start, end = max(0, cap.start() - MONEY_BEFORE_CAP), cap.end() + MONEY_AFTER_NUMBER
        if not _OTHER_UNIT.match(text, cap.end()) or _VERB_AFTER.match(text, cap.end()):
            on_money = _names_money(text, start, end, _MONEY)
        elif _NOT_A_UNIT.match(text, cap.end()):
            on_money = _names_money(text, start, end, _MONEY_AMOUNT)
        else:
            continue
        if on_money:
            return MoneyCap(scaled(cap.group(1), cap.group(2)), None)
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
