"""Tool calls that break a rule: a forbidden pattern or channel, protected data, an amount over a cap."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.call_amounts import CallAmount, amounts_in
from ctxtop.context.audit.money_caps import MoneyCap, money_cap
from ctxtop.context.audit.text_parts import matches_in_parts, read_in_part, text_parts
from ctxtop.context.rules.constraints import Constraint
from ctxtop.context.rules.facts import has_negation
from ctxtop.context.rules.forbid import SEARCH_SECONDS, ForbidError, ForbidPattern, forbid_pattern
from ctxtop.context.sanitize import quoted
from ctxtop.parsers.model import TOOL_CALL, Block, Entry

# A phone number stands apart from letters and digits: the same digits inside a hash or an id ("3f8a13800138000e"),
# after a decimal point ("0.13579246801") or after a version's "+" ("1.2.3+20130313144700") are no number anyone calls.
PHONE = re.compile(r"(?<![0-9A-Za-z])(?<!\d\.)(?:\+?86[- ]?)?1[3-9]\d(?:[- ]?\d{4}){2}(?![0-9A-Za-z])"
                   r"|(?<![0-9A-Za-z.+])\+\d{1,3}[ -]?\(?\d{2,4}\)?[ -]?\d{3,4}[ -]?\d{3,4}")
# What every match of PHONE holds: its mobile number's first three digits, or a "+" and a digit. An input with neither
# (most) is spared PHONE's search, which tries its lookbehinds at every character (a sixth of the time of it).
_MAY_HOLD_PHONE = re.compile(r"1[3-9]\d|\+\d")
# A tool that sends email, by its name: the word, or a mail service's or protocol's (a Gmail MCP server's tool is
# ``mcp__gmail__send_message``, with no "email" in it).
EMAIL_TOOL = re.compile(r"(?i)e-?mail|邮件|smtp|gmail|outlook|mailgun|sendgrid|send_?mail")
# A mail tool that only reads (``read_email_draft``, ``mcp__gmail__search_threads``) sends nothing: no mail goes out
# through it, whatever the rule against sending mail. One that also names a way to write mail is still a channel.
_READS = re.compile(r"read|get|list|search|fetch|find|query|view|show|lookup|count|download")
_WRITES = re.compile(r"send|reply|forward|compose|create|post|deliver|schedule|write|submit")
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@functools.lru_cache(maxsize=256)  # (asked at every call, for every rule against email; a log's tools are a few dozen)
def sends_email(tool_name: str) -> bool:
    """Whether a tool's name says it sends email."""
    if not EMAIL_TOOL.search(tool_name):
        return False
    words = [word.casefold() for word in _NAME_WORD.findall(tool_name)]
    return not any(_READS.fullmatch(word) for word in words) or any(_WRITES.fullmatch(word) for word in words)


def implied_checks(constraint: Constraint) -> list[tuple[str, Any]]:
    """What a constraint's own words forbid, beyond its explicit ``forbid`` patterns."""
    text = constraint.text
    checks: list[tuple[str, Any]] = []
    for pattern in constraint.forbid:
        try:
            checks.append(("pattern", forbid_pattern(pattern)))
        except ForbidError:
            continue  # a pins file's patterns are checked when it is read; one from elsewhere that fails is not used
    clauses = _clauses(text.casefold())
    if _negates(clauses, _EMAIL_WORD):
        checks.append(("tool_name", sends_email))
    if _negates(clauses, _PHONE_WORD):
        checks.append(("phone", PHONE))
    cap = money_cap(text)
    if cap is not None:
        checks.append(("cap", cap))
    return checks


_EMAIL_WORD = re.compile(r"邮件|e-?mail")
_PHONE_WORD = re.compile(r"手机号|电话|phone")
# A rule's clauses: its sentences, cut again at commas. A part of fewer than MIN_CLAUSE_WORDS words, or one that goes
# on with "or" / "and" (或, 和), belongs to the clause before it ("by phone, SMS, or email"; "Never, ever send email").
_SENTENCE_END = re.compile(r"[;；。！？!?\n]|\.(?:\s|$)")
_COMMA = re.compile(r"[,，]")
_GOES_ON = re.compile(r"\s*(?:or|nor|and|as well as|或者?|和|及|以及)(?![a-z])")
_WORD_OR_CJK = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]")
MIN_CLAUSE_WORDS = 3


def _clauses(lowered: str) -> list[str]:
    clauses: list[str] = []
    for sentence in _SENTENCE_END.split(lowered):
        parts: list[str] = []
        for part in _COMMA.split(sentence):
            if parts and (_is_short(part) or _GOES_ON.match(part) or _is_short(parts[-1])):
                parts[-1] += "," + part
            else:
                parts.append(part)
        clauses += parts
    return clauses


def _is_short(part: str) -> bool:
    return len(_WORD_OR_CJK.findall(part)) < MIN_CLAUSE_WORDS


def _negates(clauses: list[str], subject: re.Pattern[str]) -> bool:
    """Whether a clause names ``subject`` and negates: "Always email the report; never post on Slack" asks for
    email, and "Only via email, not via WeCom" allows it, where "不要发邮件" and "never email" forbid it."""
    return any(subject.search(clause) and has_negation(clause) for clause in clauses)


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


class RuleChecks(NamedTuple):
    """A constraint a tool call can break, with what to check of it (``implied_checks``); its caps and its forbid
    patterns apart too, for what only they are asked after the checks (an amount in another currency, a pattern
    that ran out of time): most rules have neither, and are then not walked again at every call."""

    constraint: Constraint
    checks: list[tuple[str, Any]]
    caps: list[MoneyCap]
    patterns: list[ForbidPattern]


def checks_of(constraints: list[Constraint]) -> list[RuleChecks]:
    """The constraints a tool call can break, with what to check of it."""
    return [RuleChecks(c, checks, [check for kind, check in checks if kind == "cap"], [check for kind, check in checks if kind == "pattern"])
            for c in constraints if (checks := implied_checks(c))]


def violations_of(message: int, block: Block, text: str, checks: list[RuleChecks], part: int | None = None) -> list[Alert]:
    """``part``: search a long input for phone numbers and a command's amounts in its first and last ``part``
    characters only (``text_parts``); a rule whose check read it so, and found nothing, is then
    named in a FORBID_SKIPPED alert: not judged in full."""
    alerts = []
    # (Parsed once for every constraint, not once each; the key tells this call from the others of
    # the same message, so that a pattern that ran out of time is noted at the one call where it did.)
    call = _Input(text, f"{message}:{block.tool_id or block.tool_name}:{len(text)}", block.tool_name, part)
    for constraint, implied, caps, patterns in checks:
        if constraint.first_stated is not None and message <= constraint.first_stated:
            continue
        if call.partly_read:  # (what the checks of the constraint before read in part: a new set only then)
            call.partly_read = set()
        detail = _violation(implied, block.tool_name or "", call, message)
        if detail:
            alerts.append(Alert(AlertKind.VIOLATION, message, None, constraint.id, f"{block.tool_name or 'tool call'}: {detail}"))
        elif caps and (other := _not_compared(caps, call)):
            alerts.append(Alert(AlertKind.AMOUNT_NOT_COMPARED, message, None, constraint.id, f"{block.tool_name or 'tool call'}: {other}"))
        elif call.partly_read and part is not None:
            read = "; ".join(_LOOKED_FOR[kind].format(kb=f"{part // 1024:,}") for kind in sorted(call.partly_read))
            alerts.append(Alert(AlertKind.FORBID_SKIPPED, message, None, constraint.id,
                                f"{block.tool_name or 'tool call'}: an input of {len(text):,} characters: {read}"))
        for pattern in patterns:
            if pattern.timed_out_on == call.key:
                alerts.append(Alert(AlertKind.FORBID_SKIPPED, message, None, constraint.id,
                                    f"forbid pattern {quoted(pattern.pattern)} took longer than {SEARCH_SECONDS:g} s on this "
                                    f"{block.tool_name or 'tool'} call: not checked here or after"))
    return alerts


def _string_values(text: str) -> list[str]:
    """The distinct strings among the values of the JSON object or array ``text`` holds (none when it holds none)."""
    if not text.lstrip().startswith(("{", "[")):
        return []
    try:
        stack = [json.loads(text)]
    except (ValueError, RecursionError):  # not JSON, or nested too deep: its text is what is searched
        return []
    found: dict[str, None] = {}
    while stack:  # (walked without recursion: an input may nest deep)
        value = stack.pop()
        if isinstance(value, str):
            found[value] = None
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return list(found)


# What a check that read the input, or a shell command in it, only in part looked for there.
_LOOKED_FOR = {"input": "phone numbers looked for in only its first and last {kb} KB",
               "command": "amounts looked for in only the first and last {kb} KB of its command"}


class _Input:
    """A tool call's input, with its amounts found only if a cap asks, and then once; ``part``: see ``violations_of``.
    ``partly_read``: what the checks of one constraint read only in part."""

    __slots__ = ("text", "key", "tool_name", "part", "partly_read", "_amounts", "_cut_command", "_strings", "_phone", "_phone_searched")

    def __init__(self, text: str, key: str, tool_name: str | None, part: int | None = None) -> None:
        self.text, self.key, self.tool_name, self.part = text, key, tool_name, part
        self.partly_read: set[str] = set()
        self._amounts: list[CallAmount] | None = None
        self._cut_command = False
        self._strings: list[str] | None = None
        self._phone: re.Match[str] | None = None
        self._phone_searched = False

    def strings(self) -> list[str]:
        """Each string value of the input as the tool gets it: the JSON text escapes quotes and backslashes and puts a
        command inside ``{"command": "…"}``, where ``^git push`` or ``rm -rf "$HOME"`` never match. (Decoded once.)"""
        if self._strings is None:
            self._strings = _string_values(self.text)
        return self._strings

    def amounts(self) -> list[CallAmount]:
        """Each amount in whole units of its currency, with how the call wrote it ("amount_cents 160000 = 1600")."""
        if self._amounts is None:
            self._amounts, self._cut_command = amounts_in(self.text, self.tool_name, self.part)  # (Stripe's MCP tools take cents)
        if self._cut_command:
            self.partly_read.add("command")
        return self._amounts

    def phone_number(self) -> re.Match[str] | None:
        """The first phone number (``PHONE``) in the parts of the input read, none that a part's end cuts short.
        (Searched once for all the rules against phone numbers.)"""
        if read_in_part(len(self.text), self.part):
            self.partly_read.add("input")
        if not self._phone_searched:
            self._phone_searched = True
            for start, end in text_parts(len(self.text), self.part):  # (a loop, not any() over a generator: cheaper)
                if _MAY_HOLD_PHONE.search(self.text, start, end):
                    self._phone = next(matches_in_parts(PHONE, self.text, self.part), None)
                    break
        return self._phone


# Two amounts are compared only when they may be in the same currency: a cap's amount and a call's in another (cap $500,
# a call that pays €450 or ¥3000) are neither over nor under each other without an exchange rate, which ctxtop does not
# know (nor could it know the one the payment will be made at). Compared as numbers, a call in yen broke a cap in dollars
# and one in dollars kept a cap in yen. Such a call is put to the user instead (the guard asks; the audit notes it, not
# failing `check`). A cap that names no currency, or an amount whose call names none, is compared: it is the user's.
def _comparable(amount: CallAmount, cap: MoneyCap) -> bool:
    return amount.currency is None or cap.currency is None or cap.currency.may_be(amount.currency)


def _not_compared(caps: list[MoneyCap], call: _Input) -> str | None:
    """Why the call could not be weighed against a cap: an amount in another currency than the cap's."""
    for cap in caps:
        for amount in call.amounts():
            if not _comparable(amount, cap):
                assert amount.currency is not None and cap.currency is not None
                return (f"{amount.written} {amount.currency.label} is in another currency than the cap {cap.amount:g} "
                        f"{cap.currency.label}: not compared (ctxtop knows no exchange rates)")
    return None


def _violation(checks: list[tuple[str, Any]], name: str, call: _Input, message: int) -> str | None:
    text = call.text
    for kind, check in checks:
        if kind == "pattern" and check.matches(message, name, text, *call.strings(), call=call.key):
            return f"matches forbidden pattern {quoted(check.pattern)}"
        if kind == "tool_name" and check(name):
            return "uses a forbidden channel"
        if kind == "phone":  # (``check`` is PHONE)
            match = call.phone_number()
            if match:
                return f"input contains a phone number ({match.group(0)[:3]}…)"
        if kind == "cap":
            for amount in call.amounts():
                if amount.value > check.amount and _comparable(amount, check):
                    return f"{amount.written} exceeds the cap {check.amount:g}"
    return None
