"""Readable rule ids a person can type: ``budget-8000``, ``wecom-only``, ``no-phone-numbers``.

An id is made from the rule's text alone, so the same rule gets the same id
on every run: its kind (a limit, "only", a prohibition, a kept invariant)
and two or three key terms. Chinese key terms are named in English when the
small glossary below knows them and kept in Chinese otherwise (never
transliterated); when nothing usable is left, a short hash of the text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from ctxtop.context.rules.facts import normalize
from ctxtop.context.rules.patterns import compiled_on_use
from ctxtop.context.sanitize import clean_text, replace_emails

MAX_TERMS = 3
MAX_ID_CHARS = 32
# Key terms of Chinese rules that have a usual English name.
GLOSSARY = {
    "预算": "budget", "企业微信": "wecom", "微信": "wechat", "邮件": "email", "邮箱": "email", "手机号": "phone-numbers",
    "电话": "phone", "错误码": "error-codes", "密码": "passwords", "日志": "logs", "数据库": "database",
    "单元测试": "unit-tests", "测试": "tests", "迁移": "migrations", "依赖": "dependencies", "密钥": "secrets",
    "相对路径": "relative-paths", "绝对路径": "absolute-paths", "解释": "explanations", "代码块": "code-block",
    "英文": "english", "中文": "chinese", "表情": "emoji", "提交": "commit", "退款": "refunds", "付款": "payments",
    "客户": "customers", "用户": "users", "发票": "invoices", "合同": "contracts", "生产": "production",
    "主分支": "main-branch", "身份证": "id-numbers", "银行卡": "card-numbers", "地址": "addresses",
}
_GLOSSARY_ORDER = sorted(GLOSSARY, key=len, reverse=True)  # longest first: 企业微信 before 微信
_ONLY = compiled_on_use(r"\bonly\b|只允许|只能|只用|只通过|只在|仅限|仅")
_NEGATED = compiled_on_use(r"\b(?:never|not|no|don'?t|dont|avoid|forbidden|prohibited|banned)\b|"
                           r"不要|不许|不准|不允许|不得|不能|不可|禁止|禁用|严禁|切勿|勿|避免|不使用")
_KEEP = compiled_on_use(r"\b(?:keep|keeps|preserve|stay|stays|remain|remains|start with|starts with|begin with|prefixed with)\b|保持|保留|开头|前缀")
_BUDGET = compiled_on_use(r"\b(?:budget|spend(?:ing)?|cost)\b|预算|花费|金额", re.IGNORECASE)
_LIMIT = compiled_on_use(r"\b(?:max(?:imum)?|at most|under|below|limit|cap|no more than|up to)\b|上限|不超过|最多|至多|以内", re.IGNORECASE)
_NUMBER = compiled_on_use(r"\d[\d,]*(?:\.\d+)?")
_UNIT_AFTER = compiled_on_use(r"\s*(words?|tokens?|lines?|characters?|chars?|files?|calls?|requests?|minutes?|"
                         r"seconds?|hours?|days?|%|字|行|个|次|条|分钟|秒|小时|天)", re.IGNORECASE)
_PREFIX_TOKEN = compiled_on_use(r"\b([A-Za-z]{2,})_(?=\W|$)")
_ENGLISH_WORD = compiled_on_use(r"[A-Za-z][A-Za-z0-9'+.-]*[A-Za-z0-9+]|[A-Za-z]")
_CJK_RUN = compiled_on_use(r"[\u3400-\u9fff]+")
# What an id never names, as --redact would mask it in the text beside it: a password's or a key's value
# ("password=hunter2" is no "password-hunter2"), an AWS key id, an address (its local part is a person's name).
# A name is tried only where its run of name characters starts (past leading hyphens, which ``\b`` skips): a try
# inside the run finds its "password" at the run's end as the first try did, or fails as it did; tried at every
# position, 100 KB of "a-a-a…" took minutes.
_SECRET_VALUE = compiled_on_use(
    r"(?i)((?<![\w-])-*+\b[\w-]*?(?:pass(?:word|wd)?|pwd|secret(?:[_-]?key)?|api[_-]?key|access[_-]?key|auth[_-]?token|token)\b[\"']?"
    r"\s*[:=]\s*)[^\s,;]+")
# Taken out before the values above, in a pass of its own: as one more branch of that pattern, a key id that starts
# a name's run ("AKIA…-password=hunter2") was read as the start of the name, and kept.
_AWS_KEY_ID = compiled_on_use(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
# A label that only stresses the rule it opens: "IMPORTANT: Never …", "**Note:** …" name the rule, not the stress.
_STRESS_LABEL = compiled_on_use(r"^[*_\s]*(?:please\s+)?(?:note|nb|important|critical|crucial|warning|caution|reminder|attention)"
                                r"[*_\s]*[:：!][*_\s]*", re.IGNORECASE)
STOP = frozenset(
    "a an the and or but of to in on at by for from with without into onto over under about as is are be been was were "
    "this that these those it its your you we our they their them any all each every some such other than then when "
    "while if else so not no never always only must should shall will would can could may might do does don dont "
    "avoid use using make sure ensure please keep stay remain start starts begin prefixed before after every time "
    "need needs required mandatory forbidden prohibited banned ever also just very more most less least per via etc "
    "e.g i.e instead rather than own new existing".split()
)
# Chinese words that carry the rule's force or grammar, not its subject.
CJK_STOP = compiled_on_use(
    r"不要|不许|不准|不允许|不得|不能|不可以|不可|禁止|禁用|严禁|切勿|必须|务必|一律|强制|需要|只允许|只能|只用|只通过|只在|仅限|始终|总是|"
    r"一定|确保|保证|保持|保留|避免|超过|停下来|问我|出现|任何|所有|里的|中的|的|了|在|和|与|或|是|把|被|对|用|要|请|仅|都|也|就|"
    r"以|为|时|上限|以内|不超过|开头|前缀|使用|发送|发|文本|通知|对外|名单|元|个|条|次|目录|下|这类|类|写"
)


def readable_id(text: str) -> str:
    """A short, typeable id for a rule, made from its text as shown (an escape sequence's hidden words, an OSC 8
    link's URL, are no part of it)."""
    text = unicodedata.normalize("NFKC", clean_text(text))
    text = _SECRET_VALUE.sub(lambda m: m.group(1), _AWS_KEY_ID.sub("", replace_emails(text, "email")))
    text = _STRESS_LABEL.sub("", text, count=1)
    lowered = text.casefold()
    limit = _limit_id(text, lowered)
    if limit:
        return limit
    prefix = _PREFIX_TOKEN.search(text)
    if prefix and _KEEP.search(lowered):
        return f"keep-{prefix.group(1).lower()}-prefix"
    negation = _NEGATED.search(lowered)
    only = _ONLY.search(lowered)
    anchor = only if only and (not negation or only.start() < negation.start()) else negation
    anchor_at = anchor.start() if anchor and _CJK_RUN.search(text) else None
    terms = _terms(*_clause(text, anchor_at)) if anchor_at is not None else []
    terms = terms or _terms(text, anchor_at)
    if not terms:
        return "rule-" + hashlib.blake2b(normalize(text).encode("utf-8", "surrogatepass"), digest_size=3).hexdigest()
    contrast = re.search(r"[,，]\s*not\s+([A-Za-z][\w.-]*)", text)
    # (A sentence's full stop is not part of the name it ends with: "Use pnpm, not npm." → pnpm-not-npm.)
    contrasted = contrast.group(1).lower().rstrip(".-") if contrast else ""
    if only and (not negation or only.start() < negation.start()):
        slug = terms[0].removesuffix("-only") + "-only"  # "Apple-only" is apple-only, not apple-only-only
    elif contrasted and terms[0] != contrasted:
        slug = f"{terms[0]}-not-{contrasted}"
    elif negation:
        slug = "no-" + "-".join(terms)
    elif _KEEP.search(lowered):
        slug = "keep-" + "-".join(terms)
    else:
        slug = "-".join(terms)
    return _trim(slug)


def _limit_id(text: str, lowered: str) -> str | None:
    number = _NUMBER.search(text)
    if not number or not (_LIMIT.search(lowered) or _BUDGET.search(lowered)):
        return None
    value = number.group(0).replace(",", "")
    if _BUDGET.search(lowered):
        return f"budget-{value}"
    unit = _UNIT_AFTER.match(text, number.end())
    unit_name = unit.group(1).lower() if unit else None
    unit_name = {"字": "chars", "行": "lines", "次": "times", "条": "items", "个": "items", "分钟": "minutes",
                 "秒": "seconds", "小时": "hours", "天": "days", "%": "pct"}.get(unit_name or "", unit_name)
    return f"max-{value}" + (f"-{unit_name}" if unit_name else "")


_CLAUSE_END = compiled_on_use(r"[，,。；;：:！!？?\n]")


def _clause(text: str, at: int) -> tuple[str, int]:
    """The clause of ``text`` around position ``at``, and ``at`` in it: what a Chinese prohibition or "only" is about
    is said there ("严禁使用一般知识进行猜测，这样会造成用户…" forbids guessing, not users)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, at)), default=0)
    end = _CLAUSE_END.search(text, at)
    return text[start : end.start() if end else len(text)], at - start


def _terms(text: str, negation_at: int | None = None) -> list[str]:
    """Key terms in text order; for a Chinese prohibition, the one term nearest its negation (what is forbidden)."""
    hits: list[tuple[int, str]] = []
    covered = [False] * len(text)
    for word in _GLOSSARY_ORDER:  # longest first, so 微信 inside 企业微信 is not named twice
        start = text.find(word)
        while start >= 0:
            if not any(covered[start : start + len(word)]):
                covered[start : start + len(word)] = [True] * len(word)
                if GLOSSARY[word] not in (name for _, name in hits):
                    hits.append((start, GLOSSARY[word]))
            start = text.find(word, start + 1)
    hits.sort()
    if negation_at is not None and hits:
        hits.sort(key=lambda hit: abs(hit[0] - negation_at))
        return [hits[0][1]]
    terms = [name for _, name in hits]
    if not terms:
        for run in _CJK_RUN.findall(text):
            terms += [piece[:6] for piece in CJK_STOP.sub("、", run).split("、") if len(piece) >= 2][: 2 - len(terms)]
            if len(terms) >= 2:
                break
    for word in _ENGLISH_WORD.findall(text):
        word = word.lower().strip("'.-")
        if len(word) > 1 and word not in STOP and not word.isdigit() and word not in terms:
            terms.append(word)
        if len(terms) >= MAX_TERMS:
            break
    return [re.sub(r"[^\w-]+", "-", t).strip("-") for t in terms[:MAX_TERMS] if t]


def _trim(slug: str) -> str:
    slug = re.sub(r"-{2,}", "-", slug).strip("-")
    if len(slug) <= MAX_ID_CHARS:
        return slug
    return slug[:MAX_ID_CHARS].rsplit("-", 1)[0]
