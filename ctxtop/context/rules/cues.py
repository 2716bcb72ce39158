"""Why a unit of text is a rule: the cue, or None.

Each test is a plain, named pattern so that every auto-detected rule can say
what made it one ("never", "imperative: use", "under heading 'Forbidden'").
What is *not* a rule is decided first: headings and lead-ins never reach
here; template placeholders, questions, permissions, preferences, role set-ups
and pointers to elsewhere are turned away.
"""

from __future__ import annotations

import re

from ctxtop.context.rules.facts import without_file_names
from ctxtop.context.rules.patterns import compiled_on_use

# Where the unit was written: an instruction file or a system prompt states standing
# rules even as bare imperatives; a person's message mixes them with one-off requests.
INSTRUCTIONS, USER_MESSAGE = "instructions", "user"

# English patterns run on lower-cased text without IGNORECASE and start at \b: several times faster
# than case-folding or look-behind at every position, and detection runs on every session open.
_W = r"\b"
_E = r"\b"


def _words(*words: str) -> str:
    return _W + "(?:" + "|".join(words) + ")" + _E


NEGATION_EN = compiled_on_use(_words(
    r"never", r"do\s+not", r"don[’']?t", r"dont", r"does\s+not", r"must\s+not", r"mustn[’']?t", r"should\s+not",
    r"shouldn[’']?t", r"shall\s+not", r"may\s+not(?!\s+(?:have|be|even|always|necessarily|need|know|exist|apply|work|match))",
    r"(?:not\s+|un)acceptable", r"not\s+allowed", r"forbidden", r"prohibited", r"banned",
    r"avoid(?:ing)?", r"no\s+longer\s+allowed", r"under\s+no\s+circumstances?", r"refrain\s+from",
))
# (Not "not only": "… not only X but also Y" adds to what is said, it restricts nothing.)
OBLIGATION_EN = compiled_on_use(_words(
    r"must", r"always", r"required", r"requirement", r"mandatory", r"shall", r"should", r"needs?\s+to", r"needs\s+(?:a|an|the)", r"has\s+to",
    r"have\s+to", r"ensure", r"make\s+sure", r"be\s+sure", r"(?<!not\s)only", r"at\s+most", r"at\s+least", r"no\s+more\s+than",
    r"no\s+less\s+than", r"exactly\s+(?:one|two|three|\d+)", r"every\s+time", r"without\s+exception",
))
_NO_X = compiled_on_use(r"^(?:no|zero)\s+(?!one\b|problem|worries|need\b)[\w:.`*-]")
_CONTRAST = compiled_on_use(r"[,，]\s*(?:not|never)\s+\S|\binstead\s+of\b|\brather\s+than\b")
_INVARIANT_EN = compiled_on_use(_words(r"keeps?", r"preserves?", r"stays?", r"remains?", r"retains?", r"prefixed\s+with",
                                  r"(?:starts?|begins?|ends?)\s+with", r"backward[s-]?\s*compatible"))
_LIMIT_EN = compiled_on_use(r"\b(?:under|below|within|at\s+most|max(?:imum)?|up\s+to|limit(?:ed)?\s+to|"
                       r"capped\s+at|(?:cap|budget|limit|maximum|max)(?:\s+(?:is|of|=|:))?|no\s+more\s+than|fewer\s+than|"
                       r"less\s+than)\s*[$€£¥]?\d|(?:≤|<=)\s*[$€£¥]?\d"
                       r"|\d[\d,.]*\s*%\+|\b\d+\s*%\+?\s+(?:test\s+)?coverage")
_NUMBER_AND_UNIT = compiled_on_use(r"\d(?:[\d,.]*\d)?%?\+?(?:\s+[^\W\d_]+)?")  # "150 words", "2,000", "95%+"
_IMPERATIVE_EN = compiled_on_use(_W + r"(?:please\s+)?(" + "|".join((
    "use", "run", "write", "keep", "follow", "add", "check", "make", "ensure", "implement", "configure", "handle", "place",
    "provide", "pay", "verify", "review", "install", "include", "expose", "delay", "assign", "read", "match", "combine",
    "pin", "scan", "reference", "escalate", "commit", "push", "test", "document", "call", "return", "log", "name", "put",
    "set", "store", "validate", "wrap", "update", "remove", "delete", "describe", "mark", "ask", "stop", "answer",
    "reply", "respond", "translate", "prefix", "start", "limit", "leave", "treat", "report", "record", "list", "cite",
    "format", "sort", "sign", "tag", "lint", "build", "deploy", "refactor", "rename", "move", "fix", "emit", "raise",
    "wait", "retry", "confirm", "obtain", "deny", "transfer", "collect", "be", "think", "explain", "summarize",
    "double-check", "prioritize", "focus", "stick", "stay", "respect", "preserve", "protect", "guard", "declare",
    "annotate", "separate", "split", "import", "export", "only", "skip", "rely", "omit", "create", "design", "apply",
    "adhere", "comply", "look", "consult", "mention", "cover", "print", "measure", "profile", "benchmark", "inline",
    "collapse", "regenerate", "bump", "squash", "rebase", "approve", "reject", "refuse", "decline", "greet", "identify",
    "enumerate", "determine", "take", "conduct", "analy[sz]e", "define", "choose", "select", "generate", "produce",
    "output", "render", "show", "display", "hide", "send", "notify", "contact", "inform", "tell", "give", "offer",
    "propose", "compare", "compute", "calculate", "estimate", "track", "monitor", "clean", "clear", "reset", "restore",
    "save", "load", "open", "close", "lock", "encrypt", "hash", "sanitize", "escape", "strip", "trim", "normalize",
    "convert", "parse", "serialize", "cache", "paginate", "throttle", "memoize", "reuse", "extract", "mock", "migrate",
    "index", "query", "fetch", "request", "abort", "exit", "restart", "schedule", "queue", "process", "proceed",
    "continue", "repeat", "iterate", "break", "keep", "write", "organize", "structure", "group", "order", "limit",
    "minimize", "maximize", "reduce", "increase", "simplify", "clarify", "state", "communicate", "flag", "warn",
    "alert", "highlight", "label", "link", "attach", "upload", "download", "check", "test", "lint", "debug", "trace",
    "profile", "benchmark", "measure", "refer", "cite", "quote", "paraphrase", "spell", "capitalize", "indent",
)) + r")" + _E)
# A leading clause the imperative may follow: "When unsure, ask." "For new files, include …" "In `cmdline/`: delay …"
_OPENER_EN = compiled_on_use(r"^(?:if|when|whenever|before|after|once|for|in|on|during|unless|while|where|until|each\s+time|"
                             r"every\s+time)\b[^,:;]{0,160}[,:]\s*")
_LABEL = compiled_on_use(r"^(?:\*\*|__)?[^\s:：*][^:：]{0,40}?(?:\*\*|__)?\s*[:：](?:\*\*|__)?\s+|^\*\*[^*]{1,60}\*\*\s*(?:[-—–:：]\s*)?")

# (禁用 bans where it opens a clause or follows 请/应…, not in "启用/禁用" or 禁用状态, a state.)
NEGATION_ZH = compiled_on_use(r"(?:(?<![\u3400-\u9fff/／、])|(?<=[请应需须并且]))禁用(?![状的])|"
                              r"不要|不许|不准|不允许|不得|不能|不可以|不可|禁止|严禁|切勿|勿|(?:(?<![\u3400-\u9fff])|(?<=[你请千万就也都]))别(?![名人的])|"
                         r"不应|不宜|避免|杜绝|不用|不使用|绝不|决不|从不|而不是|而非")
OBLIGATION_ZH = compiled_on_use(r"必须|务必|一律|强制|需要|需|务须|应该|应当|应(?=[使用遵保确在按从以提同写列避当尽采])|只允许|只能|只在|只通过|只用|只需|"
                           r"只回|只输出|仅限|仅|始终|总是|一定要|一定|统一|确保|保证|要(?![求点素是么]|紧|不然)|保持|保留|不超过|上限|以内|至多|"
                           r"最多|至少|不少于|只遵循|只使用|只修改")
_NOT_OBLIGATION_ZH = compiled_on_use(r"重要|主要|只要|要求是|摘要|概要|纲要|需求|必需品|是否需|如需|若需|不需要|无需|我需|我要|们需|户需|应用|统一管理")
_IMPERATIVE_ZH = compiled_on_use(r"^(?:请)?(?:使用|采用|保持|遵循|遵守|确保|避免|描述|移除|删除|添加|编写|运行|执行|检查|提供|回复|回答|输出|记录|提交|"
                            r"按(?!钮|键)|用(?!于|来|户|例)|先|尽量|统一|忽略|列出|给出|标注|注明|明确|优化|修改|更新|同步|补充|引用|导入|保留|控制|限制|拒绝|说明|提出|停下|"
                            r"停止|询问|告知|转人工|升级|标记|注意|参考|阅读|复用|拆分|合并|测试|验证|校验)")
_CONDITIONAL_ZH = compiled_on_use(r"^(?:如果|若|如需|如有|当|在.{0,20}时|每次|每当|凡是|一旦|遇到).{0,80}?[，,：:](?:.{0,6})(?:就|"
                             r"则|那就|请|须|需|应|必须|先|再|直接|停下|提出|用|使用|按|仍|都|也)|[，,](?:就|那就|则)[^，,。]{1,20}[。]?$")
_CONTRAST_ZH = compiled_on_use(r"不是.{1,20}而是|代替|替代")
_NEG_START_ZH = compiled_on_use(r'(?:^|(?<=[。！；;"“]))\s*(?:不|无|非)(?!是|同|少|仅|但|过|会|知|明|管|论|断|满|错|久|止|一样|足|需)')
_FORMAT_ZH = compiled_on_use(r"格式为|格式：|格式:")

_CJK_CHAR = compiled_on_use(r"[\u3400-\u9fff]")
_WORD_EN = compiled_on_use(r"[A-Za-z0-9_]+")
_STRONGEST = compiled_on_use(r"must|never|always|only|at most|at least|no more than|必须|务必|一律|强制|只|仅|始终|总是|最多|至多|至少|上限|不超过|以内")
# What is never a rule however it is phrased.
# (An empty [ ] holds no other "[": searched from the last "[" before its "]", not from each one of a run of them,
# every one of which read the run to its end: 100 KB of "[" took over a minute. Only whether there is one counts.)
_PLACEHOLDER = compiled_on_use(r"\{[A-Za-z_][\w ]*\}|<[A-Z][A-Za-z]+>|(?<![\w&])#[A-Z][a-z]+[A-Za-z]*|\[[^\]\w\[]*\]|\bXXX\b|\bTODO\b|\bTBD\b")
_BACKTICKS = compiled_on_use(r"`[^`]*`")
_CODE_SPAN = compiled_on_use(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|「[^」]*」")
_PERMISSION = compiled_on_use(_words(r"you\s+(?:can|may|could)(?!\s+(?:only|not|never)\b|n[’']t)", r"can\s+be\s+(?:used|done|run)",
                                r"is\s+allowed", r"are\s+allowed", r"feel\s+free", r"optionally", r"no\s+need\s+to",
                                r"(?:do(?:es)?\s*n[o']?t|don[’']?t)\s+(?:need|have)\s+to", r"not\s+necessary",
                                r"if\s+you\s+(?:like|want|prefer)", r"never\s+mind", r"(?:do\s+not|don[’']?t)\s+worry",
                                r"no\s+(?:rush|hurry)", r"(?:is|it[’']s|are)\s+(?:always\s+|perfectly\s+)?(?:acceptable|fine|ok(?:ay)?)\s+to",
                                r"use\s+your\s+(?:own\s+)?judge?ment")
                         # (不可以, 不可按 forbid: the permission inside a prohibition is none.)
                         + r"|(?<!不)(?:可以|可根据|可按|可与|可自行)|(?<![不只仅])允许(?!的)|自行判断|酌情")
_PREFERENCE_START = compiled_on_use(r"^(?:please\s+)?(?:prefer(?:ably)?|favou?r|consider|it\s+is\s+recommended|ideally)" + _E)
_PREFERENCE_ZH = compiled_on_use(r"优先|推荐|建议|最好")
_ROLE = compiled_on_use(r"^(?:you\s+are\s+(?:a|an|the)\b|you\s+are\s+\w+gpt|i\s+want\s+you\s+to\s+(?:act|"
                   r"be|pretend)|act\s+as\b|as\s+an?\s+\w+(?:\s+\w+)?,\s+you\s+can|"
                   r"我(?:希望|想让|想要|要)你(?:来)?(?:充当|扮演|担任|作为|表现)|下面我让你来?充当|你是一[名位个]|你是.{0,12}(?:专家|助手|大师|顾问))")
_SETUP = compiled_on_use(r"^(?:i\s+will|i'll|my\s+first\s+(?:command|request|question|sentence)|我将|我会|我的第一[个句]|第一个问题)")
_POINTER = compiled_on_use(r"^(?:see|check|refer\s+to|consult|read)\b.{0,120}\b(?:for\s+(?:the\s+|an?\s+)?(?:full|"
                      r"more|details?|detailed|complete|further|general|overview)|for\s+details)\b|^(?:see|参见|详见|参考)\b",
                      re.IGNORECASE)
_META = compiled_on_use(r"^(?:please\s+)?(?:follow|obey|apply|read|observe)\s+(?:these|the\s+following|"
                   r"all\s+(?:of\s+)?these|the\s+rules|the\s+instructions)\b|^(?:these|the\s+following)\s+(?:rules|"
                   r"instructions|guidelines)\b|"
                   r"^(?:以下|下面|下列|如下)(?:是|为)?.{0,6}(?:规则|约束|要求|指令|说明|规范)|(?:遵循|遵守)以下")
_EXCEPTION = compiled_on_use(r"^(?:except(?:\s+for)?|exception|unless)\b|^(?:例外|除外|除了)")
# "`group.ts`: Group chat state", "`make lint` - Run the linter": an entry of a file or command list says what the
# file is or the command does; only a firm word makes it a rule.
_NAMED_CODE = compiled_on_use(r"^(?:\*\*|__)?`[^`]+`(?:\*\*|__)?\s*(?:[:：]|[-—–]\s)")
# "… MUST be in Chinese. No exceptions.": a sentence that only stresses the one before it; that one is the rule.
_STRESS_ONLY = compiled_on_use(r"^(?:no\s+(?:exceptions?|excuses?)|without\s+(?:any\s+)?exceptions?)\W*$")
_EXAMPLE = compiled_on_use(r"^(?:e\.g\.|for\s+example|example|示例|例如|比如|如：)[:：\s]")
# A scope statement opens its text ("This file applies to …"); a rule may say what else it covers after it.
_FIRST_SENTENCE = compiled_on_use(r".*?(?:[。！？]|[.!?](?=\s)|$)", re.DOTALL)
_SCOPE = compiled_on_use(r"适用于|applies\s+to|this\s+file\s+(?:provides|applies|is)")

# Headings whose items are rules; sections whose items describe rather than rule.
# A noun names rules when it is the heading's own noun ("Coding Standards", "Rules for commits"), not when it only
# qualifies another ("Standard Setup", "Rule Engine Internals", "Requirements Analysis").
_RULE_NOUN = (r"(?:rules?|constraints?|requirements?|restrictions?|guidelines?|conventions?|standards?|best\s+practices|"
              r"principles?)\b(?!\s+(?!(?:for|of|and|or|to|in|on|when|that|which)\b)[a-z])")
RULE_HEADING = compiled_on_use(_W + _RULE_NOUN + "|" + _words(r"forbidden", r"prohibited", r"banned", r"do\s+not", r"don[’']?ts?",
                                                              r"never", r"must", r"mandatory", r"do's", r"dos")
                          + r"|规则|约束|要求|规范|禁止|必须|原则|准则|注意事项|红线|守则|纪律|限制|不要|不得|严禁|须知")
INFO_SECTION = compiled_on_use(r"^\W*(?:\d+[.)]\s*)?(?:(?:recommended|suggested|typical|usual|general)\s+)?"
                          r"(?:workflow|steps?|process|profile|skills?|description|background|overview|"
                          r"examples?|context|about|project\s+overview|key\s+dependencies|goals?|purpose|(?:active\s+)?technolog(?:y|ies)|tech\s+stack|"
                          r"(?:key\s+)?documents|recent\s+changes|change\s*log|glossary)\b|"
                          r"^\W*(?:工作流程|流程|步骤|简介|个人简介|技能|擅长|背景|概述|项目定位|技术栈|更新日志|变更记录)|示例|例子|范例|\bexamples?\b",
                          re.IGNORECASE)


def rule_cue(text: str, *, is_item: bool, headings: tuple[str, ...] = (), lead_in: str | None = None,
             origin: str = INSTRUCTIONS) -> str | None:
    """The cue that makes ``text`` a rule where it stands, or None when it is not one."""
    original = text.strip().strip("*_ ").strip()
    if len(original) < 4 or original.endswith((":", "：")):
        return None  # too short to be a rule, or a lead-in
    cjk = bool(_CJK_CHAR.search(original))
    if not cjk and len(_WORD_EN.findall(original)) < 2:
        return None  # "Always." on its own is a fragment cut from a sentence, not a rule
    if _may_hold_placeholder(original) and _PLACEHOLDER.search(_CODE_SPAN.sub("", original)):
        return None
    stripped = original.lower()
    bare = without_file_names(_BACKTICKS.sub("", stripped))  # code and file names may say "never" without stating a rule
    if _EXAMPLE.match(stripped) or _POINTER.match(stripped) or _META.match(stripped) or _STRESS_ONLY.match(stripped):
        return None
    if is_item and lead_in and _EXCEPTION.match(_LABEL.sub("", lead_in.strip().lower(), count=1)):
        return None  # the items of "Except for …:" are what the rule allows
    if stripped.endswith(("?", "？")) or _SCOPE.search(_first_sentence(bare)) \
            or _EXCEPTION.match(_LABEL.sub("", stripped, count=1)):
        return None
    body = _LABEL.sub("", stripped, count=1) if is_item or ":" in stripped[:45] or "：" in stripped[:45] else stripped
    section = headings[-1].lower() if headings else ""
    informational = bool(INFO_SECTION.search(section))
    # In a profile or skills section a quoted phrase is an illustration, not an order.
    cue_text = without_file_names(_CODE_SPAN.sub("", stripped)) if informational else bare
    strong, negated = _strong_cue(cue_text, cjk)
    if informational and strong and not (negated or _STRONGEST.search(strong)):
        return None  # in a profile, skills or workflow section only a firm "must"/"never"/limit is a rule
    role = _ROLE.match(body) or _ROLE.match(stripped)
    if not (strong or role or is_item or origin == INSTRUCTIONS):
        # What follows only turns rules away, or finds an item's heading or an instruction file's
        # imperative: a person's sentence with no modal word and no role set-up is not a rule.
        return None
    if _SETUP.match(stripped) and not _strong_cue(_CODE_SPAN.sub("", stripped), cjk)[0]:
        return None  # "I will type commands…", "My first request is “I need…”"
    if role:
        rest = role.string[role.end():]
        return _strong_cue(rest, cjk)[0]  # a role set-up is a rule only for the modal words after it
    opener = _OPENER_EN.match(body)
    after_opener = body[opener.end():] if opener else body
    if (_PREFERENCE_START.match(body) or _PREFERENCE_START.match(after_opener) or (cjk and _PREFERENCE_ZH.search(bare) and not strong)) and not negated:
        return None
    if _PERMISSION.search(bare):
        # A permission is no rule, the firm words inside it ("no need to", "don't have to") included:
        # only a firm word outside it makes one ("You can use npm, but never use yarn").
        strong, negated = _strong_cue(_PERMISSION.sub(" ", cue_text), cjk)
        if not strong:
            return None
    if strong:
        return None if origin == USER_MESSAGE and _describes(bare, strong) else strong
    if informational:
        return None
    if is_item:
        # An item's force may live in its heading ("Do Not" → "- push to main"): name that, not the verb.
        for heading in reversed(headings):
            if RULE_HEADING.search(heading.lower()):
                return f"under heading '{heading}'"
        if lead_in:
            lead = lead_in.lower()
            lead_cjk = bool(_CJK_CHAR.search(lead))
            # A short lead-in names its items ("Rules:"); a sentence only describes them ("The code
            # follows these principles:") unless it says must / never itself.
            named = RULE_HEADING.search(lead) and len(lead.split()) <= 4
            if named or _strong_cue(lead, lead_cjk)[0] or (origin == INSTRUCTIONS and _weak_cue(lead, lead, lead_cjk)):
                return f"under '{lead_in.strip()[:40]}'"
    if origin == INSTRUCTIONS and not _NAMED_CODE.match(stripped):
        return _weak_cue(body, bare, cjk)  # bare imperatives, procedures, invariants: rules in an instruction file
    return None


# In a message, "don't" and "only" after a subject that is not the agent describe ("the page doesn't
# load", "it only has agent times"); a rule has them first, or after you / we / please / and…
_DESCRIBED_CUES = frozenset({"don't", "don’t", "dont", "do not", "does not", "doesn't", "doesn’t", "only"})
_ADDRESSED = compiled_on_use(r"(?:^|\b(?:you|we|please|i|and|but|so|then|just|also|still|to|must|should|will|can)\s+)$")


def _describes(bare: str, cue: str) -> bool:
    """Whether ``cue`` (found in ``bare``, lower-cased) describes something rather than tells the agent."""
    if cue not in _DESCRIBED_CUES:
        return False
    at = bare.find(cue)
    clause = (re.split(r"[,;:.!?]\s*", bare[:at])[-1] if at > 0 else "").strip()
    if not clause or _IMPERATIVE_EN.match(clause):
        return False  # "Don't …", "Use only …", "reply only in Chinese"
    return not _ADDRESSED.search(clause + " ")


def _first_sentence(text: str) -> str:
    match = _FIRST_SENTENCE.match(text)
    return match.group(0) if match else text


def _may_hold_placeholder(text: str) -> bool:
    """A cheap test before the placeholder pattern: most units hold none of its characters."""
    return any(mark in text for mark in "{<#[") or "XXX" in text or "TODO" in text or "TBD" in text


def _strong_cue(bare: str, cjk: bool = True) -> tuple[str | None, bool]:
    """Modal words, a rule however and wherever it is written; and whether the cue negates.

    ``bare`` is lower-cased; the Chinese patterns run only when it holds CJK text.
    """
    for pattern in (NEGATION_EN, NEGATION_ZH) if cjk else (NEGATION_EN,):
        match = pattern.search(bare)
        if match:
            return " ".join(match.group(0).split()), True
    start = _LABEL.sub("", bare.lstrip("*_ >"), count=1)
    if _NO_X.match(start):
        return "no …", True
    if cjk and _NEG_START_ZH.search(start):
        return "不 …", True
    for pattern in (OBLIGATION_EN, _LIMIT_EN):
        match = pattern.search(bare)
        if match:
            cue = match.group(0)
            if cue[-1].isdigit():  # a limit's pattern stops at its first digit: show the number and its unit
                cue = cue[:-1] + (_NUMBER_AND_UNIT.match(bare, match.end() - 1) or match).group(0)
            return " ".join(cue.split()), False
    if not cjk:
        return None, False
    for match in OBLIGATION_ZH.finditer(bare):
        window = bare[max(0, match.start() - 2) : match.end() + 1]
        if not _NOT_OBLIGATION_ZH.search(window):
            return match.group(0), False
    return None, False


# After a verb's spelling, what makes it a noun: a compound ("Test-related", "Build-time") or a verb of its own
# ("Output will be in dist/", "Update is applied on start").
_NOUN_AFTER = compiled_on_use(r"-|\s+(?:will|would|is|are|was|were|has|have|had|can|could|does|did)\b")


def _imperative(start: str) -> str | None:
    """The verb ``start`` (lower-cased) opens with as an order, or None."""
    match = _IMPERATIVE_EN.match(start)
    if match is None or _NOUN_AFTER.match(start, match.end()):
        return None
    return match.group(1)


def _weak_cue(body: str, bare: str, cjk: bool = True) -> str | None:
    """Bare imperatives, procedures, invariants and contrasts: rules in an instruction file (lower-cased text)."""
    start = body.lstrip("*_> ").replace("**", "")
    verb = _imperative(start)
    if verb:
        return f"imperative: {verb}"
    opener = _OPENER_EN.match(start)
    if opener:
        verb = _imperative(start[opener.end():])
        if verb:
            return f"{opener.group(0).split()[0]} …, {verb}"
    match = _IMPERATIVE_ZH.match(start) if cjk else None
    if match:
        return f"imperative: {match.group(0)}"
    patterns = ((_CONDITIONAL_ZH, "conditional"), (_CONTRAST_ZH, "contrast"), (_CONTRAST, "contrast"),
                (_INVARIANT_EN, "invariant"), (_FORMAT_ZH, "format"))
    for pattern, name in patterns if cjk else patterns[2:4]:
        match = pattern.search(bare)
        if match:
            return f"{name}: {match.group(0).strip(' ,，')[:20]}"
    return None
