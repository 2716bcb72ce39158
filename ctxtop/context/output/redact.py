"""Masking secrets and personal data in what ctxtop writes (``--redact``, and the TUI's ``r``).

Covered: common provider API keys and tokens (Anthropic, OpenAI, AWS, GitHub,
GitLab, Slack, Stripe, Google, JWTs, bearer and basic credentials, PEM private keys), ``password=``-like
(``DB_PASSWORD=``, ``AWS_SECRET_ACCESS_KEY=`` too)
values, email addresses (in any script), and phone numbers (Chinese mobile, international, and North
American without "+1"). Not covered: secrets without a recognizable shape (a bare random
string), names, addresses, ID numbers — see the README.
"""

from __future__ import annotations

import re
from typing import Any

from ctxtop.context.audit.violations import PHONE
from ctxtop.context.sanitize import CUT_MARK, EMAIL_DOMAIN_CHARS, EMAIL_LOCAL_PART, replace_emails
from ctxtop.context.secret_shapes import KEY_SHAPES, SECRETS

# `password=…`, `"api_key": "…"`, `token: …`, `DB_PASSWORD=…`, `STRIPE_SECRET_KEY=…`: the name stays, the value goes.
# A name is looked for only from where its run of name characters starts (past leading hyphens, which ``\b`` skips),
# and read once to the run's end: a try from a later word start finds the same word at the same place, or none.
# (Tried from every word start, each read up to 64 characters of the run, and 100 KB of "a-a-a-" took a second;
# unbounded, they read the run to its end, and took time that grew as its square. A name longer than 64 characters,
# "MY_APPLICATION_…_DATABASE_PASSWORD=", holds no word start but its first, and was not found at all.)
# (The spaces around the sign are taken whole: a value never starts with one, so giving one back never helps.)
_ASSIGNMENT = re.compile(
    r"""(?i)((?<![\w-])-*+\b[\w-]*?(?:pass(?:word|wd)?|pwd|secret(?:[_-]?key)?|client_secret|api[_-]?key|access[_-]?key|auth[_-]?token|token)\b["']?\s*+[:=]\s*+)"""
    # (not a value masked already; a quoted value cut short before its closing quote, "sk3cr…, is masked to the cut)
    r"""(?!\[REDACTED:)("[^"\n]{1,200}"|'[^'\n]{1,200}'|"[^"\n…]{0,200}…|'[^'\n…]{0,200}…|[^\s,;&"'}\]]{1,200})"""
)
# A North American number written without "+1" (NANP: an area code and an exchange that start with 2-9): "(415)
# 555-2671", "415-555-2671", "415.555.2671", "1-800-555-0199", "+1.212.555.0143". Its groups set apart as people
# write them, one sign throughout, and no word, dot, sign or digit run around it: "2024-05-12", "10.15.7",
# "ORD-415-555-2671", "415.555.2671.3", "4155552671" stay. Only here, not in the audit's PHONE, which the guard asks
# or denies a tool call on: in code and data such shapes are ids and part numbers often enough that a rule against
# calling customers would stop calls that call no one; a number masked in a report that was none costs little.
_NANP_PHONE = re.compile(
    r"(?<![\w.+\-])(?:\+?1[ .\-]?)?"
    r"(?:\([2-9]\d\d\)[ .\-]?[2-9]\d\d[.\-]\d{4}|[2-9]\d\d(?P<sign>[.\-])[2-9]\d\d(?P=sign)\d{4})"
    r"(?![\w\-]|\.\d)"
)
# On a command line: `--password hunter2`, `--token=…`, mysql's `-pS3cret`.
_FLAG = re.compile(r"(--(?:password|passwd|token|api-key|secret)[= ]|\bmysql\b[^\n]{0,200}?\s-p)(?!\[REDACTED:)([^\s\-][^\s]{0,199})")
# What follows a secret's name in code is not a secret: a type, a keyword, a call, an attribute
# (`password: str`, `api_key=None`, `if not token: raise`, `token = request.headers.get(`).
_CODE_WORDS = frozenset("str int bool float bytes dict list optional none null nil true false undefined string number any "
                        "raise await return self this new".split())
_CODE = re.compile(r"[A-Za-z_][\w.]*\(|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


# What a preview cut short ("…") leaves of a secret or personal datum, too short for the patterns above: the start
# of a key or token (its prefix and what follows, up to the cut), the end of one (from the cut), the start of an
# email address or a phone number. Output is redacted once made, previews included. (An address cut before its
# "@" cannot be told from a word here: ``sanitize.cut``, which every preview is cut with, never cuts there.)
# (A key's start reaches the cut within 1,000 characters, wider than any preview: unbounded, each start of a run
# of them, "sk-sk-sk-…", read the run to its end, and 100 KB took 13 s.)
CUT = CUT_MARK
_CUT_START = re.compile(
    "(?P<secret>(?:" + "|".join(dict.fromkeys(start for _, start, _ in KEY_SHAPES if start is not None)) + r")[A-Za-z0-9_.+/=\-]{0,1000})…"
    rf"|(?P<email>{EMAIL_LOCAL_PART}@{EMAIL_DOMAIN_CHARS}*)…"
    # A phone number's first digits: three or more after a "+" ("+1 41…", not a sum's "a+123…"); of a Chinese
    # mobile number, five or more run together ("13800…") or a group after its first three ("138 0…"). Fewer are
    # any number's start ("in 1995…", "150…"), as a year range is (1990-1999…), unless China's country code, set
    # apart, comes before them ("86-138…", "0086 139…"; not "8613…", an amount's start as well), or a word that
    # says they are a phone number's (``_CUT_PHONE_AFTER_ITS_NAME``). (A page range cut there, "pp. 86-138…", is
    # masked too: told from a number by nothing a cut leaves.) A North American number's area code in brackets, and
    # one digit of its exchange or more ("(415) 555-…"; not "(200)…", any bracketed number); written with dashes, its
    # area code and whole exchange and the dash after it ("415-555-…"; not "415-55…", a range's start as well, nor
    # "255.255.255.…", an address's, as dots would be).
    r"|(?P<phone>(?<![A-Za-z0-9_)])\+(?=(?:[ ()-]*\d){3})\d[\d ()-]*"
    r"|(?<![\w.+\-])(?:1[ .\-]?)?\([2-9]\d\d\)[ .\-]?[2-9]\d{0,2}(?:[.\-]\d{0,4})?"
    r"|(?<![\w.+\-])(?:1-)?[2-9]\d\d-[2-9]\d\d-\d{0,3}"
    r"|(?<![\d-])(?:\+?86[- ]?)?1[3-9]\d(?:\d{2,8}|[- ]\d{1,4}(?:[- ]\d{1,4})?[- ]?)"
    r"|(?<![\w.+\-])(?:00)?86[- ]1[3-9]\d{0,2}[- ]?)…"
)
# A Chinese mobile number's first two to four digits right after a word naming a phone number ("手机 138…",
# "Phone: 1380…", "电话号码为13…"): the word stays. Without it, "138…" is told from a year or a count by nothing
# ("共 138…", "在 1995…"), and shows no more than a carrier's prefix, which millions of numbers share. (Not 号码 alone,
# "number": "订单号码 138…" is an order's.)
_CUT_PHONE_AFTER_ITS_NAME = re.compile(
    r"(?i)((?:\b(?:phone|tel|mobile|cell|call|dial|sms|whatsapp)\b(?:\s?(?:number|no\.?|#))?"
    r"|手机号?码?|电话号?码?|联系电话|联系方式|拨打|致电|短信)[:：.]?\s{0,3}(?:is\s|为|是)?\s{0,3})"
    r"(?:\+?(?:00)?86[- ]?)?1[3-9]\d{0,2}[- ]?…"
)
# The end of a key or token after the cut: 16 characters or more of its alphabet with digits, capitals and small
# letters, and no run of five small letters (which identifiers and paths have: React18StrictMode, MyProject2/src).
_CUT_END = re.compile(r"…([A-Za-z0-9_+/=\-]{16,})")


def _cut_end(match: re.Match[str]) -> str:
    tail = match.group(1)
    random_looking = (any(c.isdigit() for c in tail) and any(c.isupper() for c in tail) and any(c.islower() for c in tail)
                      and re.search(r"[a-z]{5,}", tail) is None)
    return f"{CUT}[REDACTED:secret]" if random_looking else match.group()


def _assigned(match: re.Match[str]) -> str:
    value = match.group(2)
    if value[:1] not in "\"'" and (value.rstrip("),:;").lower() in _CODE_WORDS or _CODE.match(value.rstrip("),:;"))):
        return match.group()
    return match.group(1) + _quoted(value)


def redact_text(text: str) -> str:
    """``text`` with secrets and personal data replaced by ``[REDACTED:kind]``."""
    if not text:
        return text
    text = SECRETS.sub(lambda m: f"[REDACTED:{re.sub(r'[0-9]+$', '', m.lastgroup or 'secret')}]", text)
    text = _ASSIGNMENT.sub(_assigned, text)
    text = _FLAG.sub(lambda m: m.group(1) + "[REDACTED:secret]", text)
    text = replace_emails(text, "[REDACTED:email]")
    text = PHONE.sub("[REDACTED:phone]", text)
    text = _NANP_PHONE.sub("[REDACTED:phone]", text)
    if CUT in text:
        text = _CUT_START.sub(lambda m: f"[REDACTED:{m.lastgroup}]{CUT}", text)
        text = _CUT_PHONE_AFTER_ITS_NAME.sub(lambda m: f"{m.group(1)}[REDACTED:phone]{CUT}", text)
        text = _CUT_END.sub(_cut_end, text)
    return text


def redact_text_if(text: str, redacting: bool) -> str:
    """``text`` as an output shows it: masked (``redact_text``) while redacting, else as it is."""
    return redact_text(text) if redacting else text


def _quoted(value: str) -> str:
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
        return f"{value[0]}[REDACTED:secret]{value[0]}"
    if value[:1] in "\"'" and value.endswith(CUT):
        return f"{value[0]}[REDACTED:secret]{CUT}"
    return "[REDACTED:secret]"


def redact(value: Any) -> Any:
    """A copy of a JSON-like value (a snapshot, a report) with every string redacted."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value
