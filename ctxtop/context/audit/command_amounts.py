"""The amounts a shell command names, and the currency it names them in.

A command's amounts are the ones it names, as a JSON body (curl -d '{"amount": 450}'), an object literal (node -e
"create({amount: 450})"), an option (--amount 3100, --amount=1800) or an assignment (amount=450 in a form field, a query
string, an environment variable, a keyword argument; httpie's string field total=450 and raw JSON field amount:=450); and
what its order line costs (httpie's quantity:=2 unit_price:=899). Its other numbers (PIDs, ports, line ranges,
timestamps) are no money. A form body held as a string (amount=450&currency=usd) is read the same way."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ctxtop.context.audit.money_words import NUMBER, written_amount
from ctxtop.context.audit.order_lines import line_total
from ctxtop.context.audit.text_parts import matches_in_parts, read_in_part
from ctxtop.context.rules.patterns import KeywordGate

_KEYED_IN_COMMAND = re.compile(
    r"""(?:(?P<quote>["'])(?P<quoted>[^"'\s:]{1,60})(?P=quote)\s*:"""  # "amount": 450
    r"""|(?<=[{,])\s?(?P<bare>[A-Za-z_]\w{0,60})\s?:(?!=)"""  # {amount: 450}: after a brace or a comma only ("Total: 9" is text)
    r"""|(?<![\w-])--?(?P<option>[A-Za-z][\w-]{0,60})(?:=|\s)"""  # --amount 3100, --amount=1800
    r"""|(?<![\w.-])(?P<assigned>[A-Za-z_][\w.]{0,60}):?=)"""  # amount=450, amount:=450 (not httpie's page==2, a query's)
    rf"""\s*["']{{0,2}}(?P<value>[$€£¥￥]?(?:{NUMBER})(?:[kKmM]\b|万|千)?)""")


def may_hold_keyed_amount(line: str) -> bool:
    """Whether ``line`` may hold a match of _KEYED_IN_COMMAND: every match holds a key's ":", an assignment's "=" or
    an option's "-". A command with none of them (every one of the generated sessions') is not searched with its
    four branches at every character (8 µs for a 40-character command; the three looks, a tenth of a microsecond),
    and names no amount (``without_text_tools`` only blanks: it has none of them either)."""
    return ":" in line or "=" in line or "-" in line


# The currency a command names its amounts in: currency=usd, --currency USD, "currency": "EUR", currency: 'jpy'.
_CURRENCY_IN_COMMAND = re.compile(r"""(?i)(?<![\w-])-{0,2}["']?[a-z_]{0,30}currency(?:[_-]?code)?["']?\s?(?::=|[:=\s])\s?["']?"""
                                  r"""(?P<code>[a-z]{3})(?![\w-])""")
# Every match of _CURRENCY_IN_COMMAND holds "currency": a command without it (most) is not searched at every position.
_CURRENCY_GATE = KeywordGate("currency")
# A form body: key=value pairs joined by "&", nothing else (a text that says "total=900" in a sentence is no form).
_FORM = re.compile(r"[\w.%\[\]-]+=[^&\s]*(?:&[\w.%\[\]-]+=[^&\s]*)*")


# Programs that only search, edit or print text: what they name is text, as a Write's content is, not a payment
# ("grep amount=900 src/", "sed -i s/amount=100/amount=900/", "echo '{"amount": 900}' > fixture.json", "git commit -m").
_TEXT_TOOLS = frozenset("echo printf cat tee grep egrep fgrep rg ag ack sed awk gawk head tail less more wc sort uniq cut tr "
                        "diff git find ls jq yq".split())
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec"})
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_PIPELINE_END = re.compile(r"(&&|\|\||;)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_]\w*)['\"]?")


def without_text_tools(command: str) -> str:
    """``command`` with each pipeline made only of text tools blanked out, here-document and all; what is piped to
    another program stays ("echo '{…}' | curl -d @- …"). Blanked to spaces: the same length, so that a command read
    only in part (``text_parts``) is read at the same places."""
    lines = command.split("\n")
    kept: list[str] = []
    at = 0
    while at < len(lines):
        first, end = lines[at], at + 1
        heredoc = _HEREDOC.search(first)
        if heredoc is None:
            kept.append(_without_text_pipelines(first))
        else:
            while end < len(lines) and lines[end].strip() != heredoc.group(1):
                end += 1
            end = min(end + 1, len(lines))
            text_only = all(_only_text(piece) for piece in _PIPELINE_END.split(first)[::2])
            kept += [_blank(line) if text_only else line for line in lines[at:end]]
        at = end
    return "\n".join(kept)


def _without_text_pipelines(line: str) -> str:
    pieces = _PIPELINE_END.split(line)  # pipelines at even places, the separators between them at odd ones
    return "".join(_blank(piece) if place % 2 == 0 and _only_text(piece) else piece for place, piece in enumerate(pieces))


def _only_text(pipeline: str) -> bool:
    return all(_program(simple) in _TEXT_TOOLS for simple in pipeline.split("|"))


def _program(simple_command: str) -> str:
    """The program a simple command runs, after its variable assignments and wrappers (``sudo``, ``env``…)."""
    for word in simple_command.split():
        if word not in _WRAPPERS and not _ASSIGNMENT.match(word):
            return word.lstrip("({").rsplit("/", 1)[-1]
    return ""


def _blank(text: str) -> str:
    return " " * len(text)


@dataclass(slots=True)
class CommandAmounts:
    keyed: list[tuple[str, float, str | None]] = field(default_factory=list)  # (key, amount, the currency it was written in)
    line_total: tuple[str, float, str | None] | None = None  # its order line's cost, as ``order_lines.line_total``
    currencies: list[str] = field(default_factory=list)  # the currencies it names for its amounts (``currency=usd``)
    cut: bool = False  # read only in part (``text_parts``)


def amounts_in_command(line: str, part: int | None = None) -> CommandAmounts:
    """``part``: read only the first and last ``part`` characters of a longer command (``text_parts``)."""
    found = CommandAmounts()
    fields: dict[str, str] = {}
    for match in matches_in_parts(_KEYED_IN_COMMAND, line, part) if may_hold_keyed_amount(line) else ():
        key = match.group("quoted") or match.group("bare") or match.group("option") or match.group("assigned")
        if (written := written_amount(match.group("value"))) is not None:
            found.keyed.append((key, *written))
            fields.setdefault(key, match.group("value"))
    found.line_total = line_total(fields)
    if _CURRENCY_GATE.may_match(line):
        found.currencies = [match.group("code") for match in matches_in_parts(_CURRENCY_IN_COMMAND, line, part)]
    found.cut = read_in_part(len(line), part)
    return found


def is_form(text: str) -> bool:
    return _FORM.fullmatch(text.strip()) is not None
