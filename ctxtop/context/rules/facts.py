"""Key facts and key terms of a piece of text: what a faithful summary must keep.

Facts are the exact things a paraphrase tends to lose: numbers with their
units, identifiers and code-like tokens, paths, quoted strings, and the words
that make a rule a rule (never, must, 不要, 必须 …). Terms are the content words
(or, for Chinese, character bigrams) used to tell a paraphrase from a loss.
"""

from __future__ import annotations

import re
import unicodedata

from ctxtop.context.rules.patterns import any_of, compiled_on_use
from ctxtop.context.secret_shapes import SECRETS

# (The prohibitions rule detection knows, so that a restatement is held to keep the one its rule says.)
NEGATIONS = ("never", "not", "don't", "do not", "no", "must not", "cannot", "can't", "forbidden", "prohibited",
             "不要", "禁止", "不能", "不得", "严禁", "不可", "别", "勿", "不许", "不允许", "不准", "禁用", "避免", "切勿")
OBLIGATIONS = ("must", "always", "only", "required", "shall", "need to", "at most", "no more than",
               "必须", "只允许", "只能", "务必", "一定要", "需要", "上限", "不超过")
_NUMBER_WITH_UNIT = compiled_on_use(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(?:%|元|块|万|美元|usd|rmb|k\b|m\b|kb|mb|gb|ms|s\b|sec|秒|分钟|小时|天|days?|hours?|minutes?|tokens?|次|条|个|件)?",
    re.IGNORECASE,
)
# (Capitals then name characters: "[A-Z]{2,}[0-9_-]*[A-Za-z0-9_-]*" finds the same, but its three overlapping
# runs split a long name every which way, in time its length squared, before giving up on it.)
_IDENTIFIER = compiled_on_use(r"\b(?:[A-Za-z]+_[A-Za-z0-9_]*|[A-Z]{2}[A-Za-z0-9_-]*|[a-z]+[A-Z][A-Za-z0-9]*|[A-Za-z]+-\d[\w-]*)\b")
# A path with a slash, or a file name with a known extension (a group). Each kind is tried only where its run
# of name characters starts (or at a ~, or past a file name's leading hyphens, which ``\b`` skips): a try inside
# the run reaches the run's end as the first did, so it fails as the first did. Tried at every position
# instead, a run of 100 KB of digits or letters took half a minute. The one try inside a run that can find
# more: at a hyphen right after a file name found ("a.py-b.py" holds "a.py", then "-b.py"); after a file
# name's extension, a run has no room for a second.
_EXTENSIONS = ("py", "js", "ts", "md", "json", "toml", "yaml", "yml", "go", "rs", "java", "sh", "txt", "sql", "log", "cfg", "ini")
# (One look back per length of extension, after a look ahead for the hyphen: tried at every position of every text
# searched, seventeen looks back, one per extension, made the search three times slower.)
_SAME_LENGTH = [[e for e in _EXTENSIONS if len(e) == length] for length in sorted({len(e) for e in _EXTENSIONS})]
_AFTER_A_FILE_NAME = "(?=-)(?:" + "|".join(rf"(?<=\.(?:{'|'.join(same)}))" for same in _SAME_LENGTH) + ")"
# (A path holds "@", never cut there: "/home/alice@corp.example.com/src", cut in two, gave back the address --redact masks.)
_PATH = compiled_on_use(r"~[\w.\-@]*+/[\w.\-/@]+|(?<![\w.\-@])[\w.\-@]*+/[\w.\-/@]+"
                        rf"|(?<![\w\-])-*+\b([\w\-]+\.(?:{'|'.join(_EXTENSIONS)}))\b"
                        rf"|{_AFTER_A_FILE_NAME}(-[\w\-]*\.(?:{'|'.join(_EXTENSIONS)}))\b")
_QUOTED = compiled_on_use(r"\"([^\"\n]{2,80})\"|'([^'\n]{2,80})'|“([^”\n]{2,80})”|「([^」\n]{2,80})」|`([^`\n]{2,80})`")
_RULE_WORDS = frozenset(NEGATIONS + OBLIGATIONS)
# The facts a restatement must keep, beyond the rule words: the first this many. A rule stating more is a
# pasted table or a log, whose first few dozen facts tell a restatement from a loss as well as all of them.
MAX_FACTS = 64
_WORD = compiled_on_use(r"[A-Za-z][A-Za-z'-]{2,}")
# (One character, then the rest of the run: a pattern that starts with one class is looked for a character at
# a time, in C; "[\u4e00-\u9fff]+" is tried as a whole at each place, five times slower in a text that holds none.)
_CJK_RUN = compiled_on_use(r"[\u4e00-\u9fff][\u4e00-\u9fff]*")
STOPWORDS = frozenset(
    "the and for with that this from into your you are was were will would should could have has had not any all "
    "its it's our their them then than when what which who how why can also just about over under more most less "
    "make sure keep use using used must never only always".split()
)
# Bigrams that carry grammar, not meaning.
CJK_STOP_BIGRAMS = frozenset({"的是", "里的", "在任", "任何", "所有", "一个", "我们", "你们", "他们", "这个", "那个"})


# Texts longer than this are normalized a piece at a time, cut at whitespace (which the result drops
# anyway, and which no normalization joins to a neighbour): a 3 MB tool output split into words at
# once would be half a million strings.
NORMALIZE_PIECE = 1 << 16
_SPACE = compiled_on_use(r"\s")


# The whitespace ``str.split`` knows that NFKC keeps as it is, beyond ASCII (it makes every other kind a
# space: no-break, en, em, ideographic…). Rare; a text holding one is split into words instead.
_KEPT_WIDE_SPACES = ("\x85", "\u1680", "\u2028", "\u2029")
_ASCII_SPACES = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
# The UTF-8 bytes of the characters casefold leaves as they are, told by their first byte: ASCII (lowered
# already), the bytes that go on a character (0x80-0xBF), and the first bytes whose 4096 characters all stay
# (0xE0: U+0800-0FFF, Indic and others; 0xE3-0xE9: U+3000-9FFF, kana and CJK; 0xEB-0xEE: U+B000-EFFF, Hangul
# and private use). A text whose bytes are all of these needs no casefold: a Chinese text, say.
_CASEFOLD_KEEPS = bytes(range(0xC0)) + b"\xe0" + bytes(range(0xE3, 0xEA)) + bytes(range(0xEB, 0xEF))


def normalize(text: str, piece: int = NORMALIZE_PIECE) -> str:
    """Width- and case-folded text with all whitespace removed, for verbatim matching."""
    if len(text) <= piece:
        return _folded_without_spaces(unicodedata.normalize("NFKC", text))
    pieces, start = [], 0
    while start < len(text):
        cut = _SPACE.search(text, start + piece)
        end = cut.start() if cut else len(text)
        pieces.append(_folded_without_spaces(unicodedata.normalize("NFKC", text[start:end])))
        start = end
    return "".join(pieces)


def _folded_without_spaces(text: str) -> str:
    """``"".join(text.casefold().split())`` for a text NFKC has normalized: its UTF-8 bytes with the ASCII
    spaces deleted and the ASCII letters lowered (all casefold does to ASCII) in one pass that makes no string
    per word (splitting makes one per word: half the time); then casefold, only if a character beyond ASCII
    is left, and on the text without its spaces (casefold takes a third of the time, and a pure ASCII text
    needs none of it, nor a text beyond ASCII whose other characters casefold leaves as they are: a look at its
    bytes, ``_CASEFOLD_KEEPS``, costs a tenth of a casefold). Exact: casefold maps each character on its own, no
    character to or from whitespace."""
    wide = _KEPT_WIDE_SPACES
    if wide[0] in text or wide[1] in text or wide[2] in text or wide[3] in text:
        return "".join(text.casefold().split())
    # (surrogatepass: a lone surrogate a log escaped comes back as it was)
    squeezed = text.encode("utf-8", "surrogatepass").translate(_ASCII_LOWER, _ASCII_SPACES)
    folded = squeezed.decode("utf-8", "surrogatepass")
    return folded if folded.isascii() or not squeezed.translate(None, _CASEFOLD_KEEPS) else folded.casefold()


def key_facts(text: str) -> list[str]:
    """The exact facts in ``text`` a faithful restatement must keep, in order, without repeats."""
    text = unicodedata.normalize("NFKC", text)
    # A key or token is one fact, whole: its body alone (after "sk-proj-") would be shown where nothing tells it
    # for a key, and --redact would leave it. (First: the parts of it found below are then in it, and not kept.)
    found: list[str] = [m.group(0) for m in SECRETS.finditer(text)]
    for match in _NUMBER_WITH_UNIT.finditer(text):
        value = match.group(0).strip().rstrip(",")
        if any(ch.isdigit() for ch in value) and len(value.replace(",", "")) >= 2:
            found.append(value)
    found += find_paths(text)
    found += [m.group(0) for m in _IDENTIFIER.finditer(text)]
    found += [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    lowered = text.casefold()
    rule_words = [w for w in NEGATIONS + OBLIGATIONS if _has_word(lowered, w)]
    # Each fact is looked for in those kept before it: at most MAX_FACTS of them, so that a rule holding a
    # pasted table of ten thousand numbers costs ten thousand looks at a few dozen, not ten thousand squared.
    unique: list[str] = []
    kept: set[str] = set()
    for fact in found:
        if len(unique) >= MAX_FACTS:
            break
        if fact not in kept and (fact in _RULE_WORDS or not any(fact in other for other in unique if len(other) > len(fact))):
            unique.append(fact)
            kept.add(fact)
    return unique + [w for w in rule_words if w not in kept]


# A file's extension at the end of a path: what tells a path with one slash ("docs/must-read.md") from a pair of
# words ("email/sms", "and/or"), which is prose.
_ENDS_WITH_EXTENSION = compiled_on_use(rf"\.(?:{'|'.join(_EXTENSIONS)})$")


def without_file_names(text: str) -> str:
    """``text`` with each path and file name made a space: the words it is made of say nothing
    ("docs/must-read.md" states no "must", "never-again.txt" no "never"). A path is one that has a file
    extension, two slashes or more, or starts at the root or home; a pair of words with one slash is kept."""
    if "/" not in text and "." not in text:
        return text
    return _PATH.sub(lambda found: " " if _names_a_file(found.group(0)) else found.group(0), text)


def _names_a_file(path: str) -> bool:
    return ("/" not in path or path.count("/") >= 2 or path.startswith(("/", "~", "."))
            or _ENDS_WITH_EXTENSION.search(path) is not None)


def find_paths(text: str) -> list[str]:
    """The paths and file names in ``text``, in order."""
    return [m.group(m.lastindex or 0) for m in _PATH.finditer(text)]


# 别 says "don't" on its own, and is a part of many words that do not: 特别 (especially), 分别 (each), 区别, 类别, 级别,
# 识别, 个别, 告别, 性别; 别人 (others), 别的, 别处, 别名.
_BIE = compiled_on_use(r"(?<![特分区类级识个告性差派鉴辨离判甄道送])别(?![人的处名称墅样致具])")


def _has_word(lowered: str, word: str) -> bool:
    if word.isascii():
        return re.search(rf"(?<![a-z']){re.escape(word)}(?![a-z])", lowered) is not None
    if word == "别":
        return _BIE.search(lowered) is not None
    return word in lowered


# The negation words written in ASCII as one pattern, each with ``_has_word``'s bounds: a text holds one of them
# exactly when it matches (the engine tries every word at every place before it gives up), in one search
# instead of one per word. Negations are looked for in every sentence of a restating block.
_ASCII_NEGATION = compiled_on_use(rf"(?<![a-z']){any_of(w for w in NEGATIONS if w.isascii())}(?![a-z])")
_WIDE_NEGATIONS = tuple(w for w in NEGATIONS if not w.isascii())


def has_negation(text: str) -> bool:
    return _holds_negation(_folded(text))


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _holds_negation(folded: str) -> bool:
    """``has_negation`` of a text already folded. (An ASCII text holds none of the other words.)"""
    if _ASCII_NEGATION.search(folded) is not None:
        return True
    return not folded.isascii() and any(_has_word(folded, w) for w in _WIDE_NEGATIONS)


# Where a sentence or clause of a restatement ends: a summary holds many, each about something else.
_SENTENCE_END = compiled_on_use(r"(?<=[.!?])\s+|[\n。！？；;]")


def negated_terms(text: str) -> set[str]:
    """The key terms of the sentences of ``text`` that hold a negation (``negates``)."""
    terms: set[str] = set()
    for sentence in _SENTENCE_END.split(text):
        folded = _folded(sentence)
        if _holds_negation(folded):
            terms |= _terms_of_folded(folded)
    return terms


def negates(negated: set[str], terms: set[str]) -> bool:
    """Whether a sentence of a text that holds a negation names one of ``terms``, told by the text's
    ``negated_terms`` (their union meets ``terms`` exactly when one sentence's terms do): a summary's "Tests do
    not pass" does not make its "send email to customers" a restatement of "Do not send email to customers".
    (The negation words are no such terms: "Never force-push" names nothing of "Never push to main".)"""
    return not negated.isdisjoint(terms.difference(NEGATIONS))


def key_terms(text: str) -> set[str]:
    """Content words (English, lower-cased) and CJK bigrams of ``text``."""
    return _terms_of_folded(_folded(text))


def _terms_of_folded(text: str) -> set[str]:
    """``key_terms`` of a text already folded."""
    # Each word and run once (a set first), then trimmed: a text repeats most of its words.
    terms = {w.strip("'-") for w in set(_WORD.findall(text))} - STOPWORDS
    # (An ASCII text holds no run: ``isascii`` is known without a look at the text, which the search reads
    # all of: a fifth of the time of an English text's terms.)
    for run in set(_CJK_RUN.findall(text)) if not text.isascii() else ():
        if len(run) <= 2:  # its own term, as most runs (no generator of its one bigram)
            terms.add(run)
        else:
            terms.update(run[i : i + 2] for i in range(len(run) - 1))
    terms.discard("")
    return terms - CJK_STOP_BIGRAMS


def fact_present(fact: str, normalized_text: str) -> bool:
    return normalize(fact) in normalized_text
