"""Statements in a compaction's summary that the transcript before it does not support.

Two kinds, from the summary's own sentences:
- claims about the user (asked, approved, decided, said…): an approval must be found in a
  user message holding an approval word and part of what was approved; any other claim in
  a user message sharing a third of its key terms; and the claim's exact facts (numbers,
  identifiers, paths) must be in a user message.
- identifiers, numbers with units and paths appearing nowhere before the boundary.
"Before the boundary" is the window the summarizer was given (an earlier summary in it
counts as a source: a claim carried over is not invented by this one).
"""

from __future__ import annotations

import re

from ctxtop.context.audit.sentences import sentences
from ctxtop.context.rules.facts import _IDENTIFIER, find_paths, key_facts, key_terms, normalize
from ctxtop.context.rules.patterns import KeywordGate
from ctxtop.context.sanitize import cut
from ctxtop.parsers.model import SUMMARY, USER

MAX_CLAIMS = 20
CLAIM_TERM_SHARE = 1 / 3

_USER_CLAIM = re.compile(
    r"\b(?:the\s+)?user(?:'s)?\s+(?:has\s+|had\s+)?(?:also\s+|explicitly\s+|already\s+)?"
    r"(?P<en>asked|requested|approved|confirmed|agreed|decided|said|told|wants|wanted|instructed"
    r"|authori[sz]ed|allowed|permitted|signed off|okayed|chose|prefers)\b"
    r"|用户(?:已经|已|明确|也)?(?P<zh>要求|同意|批准|确认|决定|说|表示|希望|授权|允许|指示|让|指定)",
    re.IGNORECASE,
)
# Every match of _USER_CLAIM holds one of these as it is: a sentence without either is not searched (most are not
# about the user, and the pattern, starting with a word boundary, is tried at each of their positions).
USER_CLAIM_WORDS = KeywordGate("user", "用户")
_APPROVAL_VERB = re.compile(r"approved|confirmed|agreed|authori[sz]ed|allowed|permitted|signed off|okayed|同意|批准|确认|授权|允许", re.IGNORECASE)
_APPROVAL_WORD = re.compile(r"\b(?:approve[sd]?|approval|yes|ok(?:ay)?|go ahead|confirm(?:ed)?|agree[sd]?|lgtm|sure|fine|do it|proceed)\b"
                            r"|同意|批准|可以|确认|没问题|行|好的|放行|授权", re.IGNORECASE)
# (The digit first, then what precedes it: the matches of "(?<![\w.])\d…", whose look back first is tried at every
# position of a summary, where the search now skips to the next digit.)
_NUMBER_UNIT = re.compile(r"\d(?<![\w.]\d)[\d,]*(?:\.\d+)?\s?(?:%|元|美元|USD|KB|MB|GB|ms|秒|分钟|小时|天|days?|hours?|tokens?)", re.IGNORECASE)
# What Claude Code appends to every summary it writes: where the transcript is, not a claim of the summary's.
_HARNESS_TAIL = re.compile(r"read the full transcript at:\s*\S+", re.IGNORECASE)
# Where a claim's own words end and the summarizer's elaboration of it begins ("The user requested X — the epic Y").
_ELABORATION = re.compile(r"\s[—–-]\s|:\s|;\s|\s\(")
# (The capital first, then the word boundary before it, as a look back: "\b[A-Z]…" is tried at every position, this
# only at capitals.)
_PASCAL_CASE = re.compile(r"[A-Z](?<!\w[A-Z])[a-z]+[A-Z][A-Za-z0-9]+\b")
_CODE_LIKE = re.compile(r"[\d_]|\w-\w|[a-z][A-Z]")
_CLAIM_WORDS = frozenset({"user", "users", "asked", "requested", "approved", "confirmed", "agreed", "decided", "said", "told",
                          "wants", "wanted", "instructed", "authorized", "authorised", "allowed", "permitted", "signed",
                          "okayed", "chose", "prefers", "用户", "同意", "批准", "确认", "要求", "决定", "表示", "希望"})


def unsupported_claims(sources: list[tuple[str, str, str]], summaries: list[str], joined: str | None = None) -> list[dict[str, str]]:
    """``sources``: the window before the boundary as (category, text, normalized text) per block;
    ``summaries``: the texts of the compaction's summary. At most MAX_CLAIMS findings. ``joined``: the sources'
    normalized texts joined by a newline, if made already (``WindowText.joined``)."""
    said = [(text, normalized) for category, text, normalized in sources if category in (USER, SUMMARY)]
    said_normalized = "\n".join(normalized for _, normalized in said)
    # Every block before the boundary, normalized, joined by a newline, which no normalized text holds: a token
    # found in it is found in a block (one search per token, not one per block).
    everything = joined if joined is not None else "\n".join(normalized for _, _, normalized in sources)
    found: list[dict[str, str]] = []
    seen: set[str] = set()

    def flag(text: str, why: str) -> None:
        if text not in seen and len(found) < MAX_CLAIMS:
            seen.add(text)
            found.append({"text": text, "why": why})

    for summary in summaries:
        for sentence in sentences(summary):
            claim = _USER_CLAIM.search(sentence) if USER_CLAIM_WORDS.may_match(sentence) else None
            if claim:
                elaboration = _ELABORATION.search(sentence, claim.end())
                why = _unsupported_user_claim(sentence[: elaboration.start()] if elaboration else sentence, claim, said, said_normalized)
                if why:
                    flag(cut(sentence, 300), why)
        for token in _coordinates(_HARNESS_TAIL.sub("", summary)):
            if not _appears(token, everything):
                flag(token, "appears nowhere before the boundary")
    return found


def _appears(token: str, everything: str) -> bool:
    """Whether ``token`` (a path, identifier or number) is in some block before the boundary. A slashed token that
    is no file path (no dot, not rooted) is words or names the summary joined: "mouseup/keyup", "compile/credo",
    Elixir's "create_message_refs/2" (a function and its arity), each part of which is looked for on its own."""
    needles = [normalize(token)]
    if "/" in token and "." not in token and not token.startswith(("/", "~")):
        parts = [part for part in token.split("/") if part]
        if len(parts) == 2 and parts[1].isdigit():
            parts = parts[:1]  # name/arity
        needles = [normalize(part) for part in parts]
    return all(needle in everything for needle in needles if needle)


def _unsupported_user_claim(sentence: str, claim: re.Match, said: list[tuple[str, str]], said_normalized: str) -> str | None:
    facts = [f for f in key_facts(sentence) if any(ch.isdigit() for ch in f) or not f.isalpha() or f.isupper()]
    missing = [f for f in facts if normalize(f) not in said_normalized]
    if missing:
        return f"no user message before the boundary mentions {', '.join(missing[:3])}"
    terms = key_terms(sentence[claim.end():]) - _CLAIM_WORDS or key_terms(sentence) - _CLAIM_WORDS
    verb = claim.group("en") or claim.group("zh") or ""
    if _APPROVAL_VERB.fullmatch(verb):
        for text, _ in said:
            if _APPROVAL_WORD.search(text) and (not terms or terms & key_terms(text)):
                return None
        return "the user approves nothing of the kind before the boundary"
    if not terms:
        return None
    for text, _ in said:
        if len(terms & key_terms(text)) >= CLAIM_TERM_SHARE * len(terms):
            return None
    return "no user message before the boundary says so"


def _coordinates(text: str) -> list[str]:
    found = [path.rstrip(".,;:") for path in find_paths(text)]
    # Identifiers that look like code (a digit, _ or -, or camelCase), not words in capitals ("API").
    found += [m.group(0) for m in _IDENTIFIER.finditer(text) if _CODE_LIKE.search(m.group(0))]
    found += _PASCAL_CASE.findall(text)
    found += [m.group(0).strip() for m in _NUMBER_UNIT.finditer(text)]
    return _outermost(found)


def _outermost(found: list[str]) -> list[str]:
    """Each of ``found`` once, of three characters or more, less those that are part of another: a part of a path
    already listed says nothing more. A token found again in all of them joined by a newline (which none holds, so
    no match spans two) is part of another: one search each, where a search per pair costs a long summary's
    hundreds of tokens squared."""
    distinct = list(dict.fromkeys(found))
    joined = "\n".join(distinct)
    return [t for t in distinct if len(t) >= 3 and joined.count(t) == 1]
