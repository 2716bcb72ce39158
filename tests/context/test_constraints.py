"""Constraint status, auto-detection, the compaction audit, violations and `ctxtop check`."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.audit.events import compaction_events
from ctxtop.context.audit.run import run_audit
from ctxtop.context.audit.violations import implied_checks
from ctxtop.context.rules.constraints import (
    KEPT,
    LOST,
    PARAPHRASED,
    UNVERIFIABLE,
    WindowText,
    detect_constraints,
    locate,
    make_constraint,
)
from ctxtop.context.rules.facts import (
    _CASEFOLD_KEEPS,
    CJK_STOP_BIGRAMS,
    NEGATIONS,
    STOPWORDS,
    _has_word,
    has_negation,
    key_facts,
    key_terms,
    negated_terms,
    negates,
    normalize,
)
from ctxtop.context.rules.pins import PinsError, load_pins
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.window.replay import Window, WindowBlock
from ctxtop.context.window.session import Session
from ctxtop.parsers import parse
from ctxtop.parsers.model import SUMMARY, TOOL_RESULT, USER, Block, Entry
from ctxtop.tui.cli import main
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

from ..conftest import DATA


def window_of(*texts: str, opaque: bool = False) -> Window:
    window = Window(at=len(texts))
    for i, text in enumerate(texts, 1):
        block = Block(USER, text)
        window.append(WindowBlock(Entry(i, "user", [block], 0, i), 0, block, 1))
    if opaque:
        block = Block(SUMMARY, "", opaque=True)
        window.append(WindowBlock(Entry(99, "system", [block], 0, 99), 0, block, 1))
    return window


@pytest.mark.parametrize(
    "rule, window_texts, status, missing",
    [
        ("预算上限 8000 元，超过必须停下来问我", ["好的。预算上限８０００ 元，超过必须停下来问我。"], KEPT, []),  # full-width digits, spacing
        ("Never push to main.", ["ok", "  never   PUSH to main. "], KEPT, []),
        ("预算上限 8000 元，超过必须停下来问我", ["用户设定了预算上限，超过时必须停下来确认"], PARAPHRASED, ["8000 元"]),
        ("Keep the budget cap at 8000 USD and stop to ask before spending more",
         ["summary: keep the budget cap in mind and stop to ask before spending"], PARAPHRASED, ["8000 USD"]),
        ("Do not send email to customers", ["Remember to send email to customers weekly"], LOST, ["not", "do not"]),  # negation flipped
        # A summary's other sentences deny other things: the negation must be where the rule's words are restated.
        ("Do not send email to customers", ["Summary: the agent will send email to customers weekly. Tests do not pass yet."],
         LOST, ["not", "do not"]),
        ("Never push to main", ["Summary: the user asked to push to main once CI is green.\nNever force-push."], LOST, ["never"]),
        ("Never push to main", ["Summary: CI is green. The user said main is never to be pushed to directly."], PARAPHRASED, []),
        ("只允许用企业微信发通知，不要发邮件", ["通知走企业微信渠道，发邮件给采购部。不要改动订单。"], LOST, ["不要", "只允许"]),
        # 别 is "don't" alone, not in 特别 ("especially") or 分别 ("each"): a summary saying the mail went out keeps no ban.
        ("不要发邮件给客户", ["特别说明：已经发邮件给客户。"], LOST, ["不要"]),
        ("不要发邮件给客户", ["已经分别发邮件给客户。"], LOST, ["不要"]),
        ("不要发邮件给客户", ["别发邮件给客户。"], PARAPHRASED, ["不要"]),
        ("客户名单里的手机号不能出现在任何对外文本里", ["核对采购订单并通知相关人员"], LOST, ["不能"]),
        ("Error codes must start with ERR_", ["nothing relevant here"], LOST, ["ERR_", "must"]),
    ],
)
def test_status_in_window(rule, window_texts, status, missing):
    result = WindowText(window_of(*window_texts)).status(make_constraint(rule, "pin"))
    assert result.status == status
    assert result.missing_facts == missing


def test_invisible_rule_behind_an_opaque_summary_is_unverifiable():
    result = WindowText(window_of("unrelated", opaque=True)).status(make_constraint("Never delete migrations", "pin"))
    assert result.status == UNVERIFIABLE


LABELLED = [
    ("预算上限 8000 元，超过必须停下来问我", True),
    ("只允许用企业微信发通知，不要发邮件", True),
    ("Never push directly to main.", True),
    ("Error codes must start with ERR_ so that old clients keep working.", True),
    ("Do not modify files under migrations/.", True),
    ("Only use the staging database.", True),
    ("The monthly budget is capped at 500 USD.", True),
    ("禁止在日志里打印用户密码", True),
    ("Please look at the failing test.", False),
    ("Thanks, that looks good!", False),
    ("What does this function return?", False),
    ("帮我看一下这个报错是什么意思", False),
    ("Run the tests again.", False),
    ("The build finished in 3 minutes.", False),
]


def test_auto_detection_precision_and_recall():
    entries = [Entry(i, "user", [Block(USER, text)], 0, i) for i, (text, _) in enumerate(LABELLED, 1)]
    detected = {c.text for c in detect_constraints(entries)}
    truth = {text.strip() for text, is_rule in LABELLED if is_rule}
    hits = len(detected & truth)
    precision, recall = hits / max(1, len(detected)), hits / len(truth)
    print(f"auto-detection on {len(LABELLED)} labelled sentences: precision {precision:.2f}, recall {recall:.2f}")
    assert precision >= 0.85 and recall >= 0.85


def test_demo_audit_flags_the_seed_incident_at_the_first_compaction():
    session = Session.open(demo_path(), window=DEMO_WINDOW)
    constraints = select_rules(session.entries, RuleRequest())
    assert [(c.source, c.first_stated) for c in constraints] == [("auto", 1), ("auto", 2), ("auto", 3)]
    audit = run_audit(session, constraints)
    first = audit.compactions[0]
    by_text = {c.text[:4]: c.id for c in constraints}
    before_after = {cid: (b.status, a.status) for cid, (b, a) in first.constraints.items()}
    assert before_after[by_text["预算上限"]] == (KEPT, PARAPHRASED)
    assert before_after[by_text["客户名单"]] == (KEPT, LOST)
    kinds = [(a.kind.key, a.message) for a in audit.alerts]
    assert ("constraint_paraphrased", 204) in kinds and ("constraint_lost", 204) in kinds
    violations = [a for a in audit.alerts if a.kind.key == "violation"]
    assert {a.constraint for a in violations} == set(by_text.values())
    assert any("phone number" in a.detail for a in violations) and any("exceeds the cap 8000" in a.detail for a in violations)
    assert first.lost_items["numbers"]  # order amounts in tool results did not survive the summary


def test_implicit_compaction_from_a_usage_drop():
    lines = (DATA / "claude_compact.jsonl").read_text().splitlines()[:7]
    lines.append(lines[2].replace('"msg_1"', '"msg_9"').replace('"cache_read_input_tokens": 100', '"cache_read_input_tokens": 10')
                 .replace('"uuid": "a1"', '"uuid": "a9"'))
    events = compaction_events(Session(parse("\n".join(lines).encode())))
    assert [(e.kind, e.pre_tokens, e.post_tokens) for e in events] == [("implicit", 165, 20)]


def test_drift_counts_repeated_calls_after_compaction():
    call = '{"type":"assistant","sessionId":"s","uuid":"%s","message":{"id":"%s","role":"assistant","content":[{"type":"tool_use","id":"t%s","name":"Read","input":{"file_path":"/a.py"}}],"usage":{"input_tokens":%d,"output_tokens":1}}}'
    lines = [call % (i, f"m{i}", i, 100) for i in range(2)]
    lines.append('{"type":"system","subtype":"compact_boundary","sessionId":"s","uuid":"b","compactMetadata":{"trigger":"auto","preTokens":100,"postTokens":10}}')
    lines += [call % (i, f"m{i}", i, 20) for i in range(10, 15)]
    session = Session(parse("\n".join(lines).encode()))
    audit = run_audit(session, [])
    assert audit.compactions[0].drift == {"repeated_calls": 5, "rereads": 5, "repeated_edits": 0}
    assert [a.kind.key for a in audit.alerts] == ["drift"]


def test_drift_over_several_compactions_compares_with_everything_before_each():
    call = ('{"type":"assistant","sessionId":"s","uuid":"%s","message":{"id":"%s","role":"assistant","content":[{"type":"tool_use",'
            '"id":"t%s","name":"%s","input":{"file_path":"%s"}}],"usage":{"input_tokens":100,"output_tokens":1}}}')
    boundary = '{"type":"system","subtype":"compact_boundary","sessionId":"s","uuid":"b%d","compactMetadata":{"trigger":"auto"}}'
    lines = [call % ("a", "ma", "a", "Read", "/a.py"), call % ("b", "mb", "b", "Edit", "/b.py"), boundary % 1,
             call % ("c", "mc", "c", "Read", "/a.py"), call % ("d", "md", "d", "Read", "/c.py"), boundary % 2,
             call % ("e", "me", "e", "Read", "/c.py"), call % ("f", "mf", "f", "Edit", "/b.py"), call % ("g", "mg", "g", "Read", "/new.py")]
    session = Session(parse("\n".join(lines).encode()))
    first, second = (c.drift for c in run_audit(session, []).compactions)
    assert first == {"repeated_calls": 1, "rereads": 1, "repeated_edits": 0}
    # After the second compaction, /c.py (read between the two) and the edit of /b.py (before the first) both repeat.
    assert second == {"repeated_calls": 2, "rereads": 1, "repeated_edits": 1}


def test_pins_file(tmp_path):
    path = tmp_path / "pins.toml"
    path.write_text('[[pin]]\nid = "budget"\ntext = "预算上限 8000 元"\nfacts = ["8000"]\nforbid = ["send_email"]\n', encoding="utf-8")
    [pin] = load_pins(path)
    assert (pin.id, pin.facts, pin.forbid, pin.source) == ("budget", ["8000"], ["send_email"], "pin")
    path.write_text("[[pin]]\ntext = 'x'\nforbid = ['(']\n")
    with pytest.raises(PinsError, match="bad forbid regex"):
        load_pins(path)


def test_forbid_pattern_raises_violation(capsys):
    code = main(["check", "--demo", "--pin", "只允许用企业微信发通知，不要发邮件", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and not report["auto_detected"]
    kinds = [(f["kind"], f["message"]) for f in report["findings"]]
    assert ("constraint_lost", 204) in kinds and ("violation", 388) in kinds


@pytest.mark.parametrize(
    "argv, code",
    [
        (["check", "--demo"], 1),
        (["check", str(DATA / "claude_compact.jsonl"), "--pin", "Never push to main."], 1),
        (["check", str(DATA / "claude_compact.jsonl"), "--pin", "continue with the report"], 0),  # preserved by the compaction
        (["check", str(DATA / "codex_local_compaction.jsonl")], 0),  # the rule is in the replacement history
        (["check", "/no/such/file"], 2),
        (["check", "--demo", "--pins", "/no/such/pins.toml"], 2),
    ],
)
def test_check_exit_codes(capsys, argv, code):
    assert main(argv) == code


def test_a_rule_weakened_at_one_compaction_and_lost_at_the_next_is_alerted_at_both():
    # The demo's budget cap is paraphrased by the first summary (missing 8000 元) and gone after the second: only a rule
    # kept verbatim before a compaction raised an alert, so its loss at 306 went unsaid, and the breach at 386 was
    # told as "weakened at 204".
    session = Session.open(demo_path(), window=DEMO_WINDOW)
    constraints = select_rules(session.entries, RuleRequest())
    budget = next(c.id for c in constraints if c.text.startswith("预算上限"))
    audit = run_audit(session, constraints)
    said = [(a.kind.key, a.message, a.detail.split(": ", 1)[1]) for a in audit.alerts if a.constraint == budget and a.compaction]
    assert said == [("constraint_paraphrased", 204, "kept → paraphrased; missing 8000 元"),
                    ("constraint_lost", 306, "paraphrased → lost; missing 8000 元, 必须, 上限")]
    third = audit.compactions[2].constraints[budget]
    assert (third[0].status, third[1].status) == (LOST, LOST)  # lost already: nothing more to say


def test_check_demo_output_names_each_finding(capsys):
    main(["check", "--demo"])
    out = capsys.readouterr().out
    assert "constraint_paraphrased" in out and "missing 8000 元" in out
    assert "constraint_lost" in out and "客户名单里的手机号" in out
    assert "send_email" in out


def test_codex_remote_compaction_makes_unseen_rules_unverifiable(capsys):
    path = str(DATA / "codex_remote_compaction.jsonl")
    assert main(["check", path, "--pin", "Listed the repository.", "--json"]) == 1
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["kind"] == "constraint_unverifiable"
    # the user's rule is in the replacement history verbatim: it survives
    assert main(["check", path, "--pin", "Never delete migrations."]) == 0


def test_codex_local_compaction_that_drops_a_rule_is_caught(capsys):
    path = str(DATA / "codex_local_compaction.jsonl")
    assert main(["check", path, "--pin", "Listed the repository."]) == 1
    assert "constraint_lost" in capsys.readouterr().out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["A", "ß", "ﬁ", "Ａ", "①", "é", "e\u0301", " ", "\n", "\u3000", "\u00a0", "订单", "İ", "x", "\u0301", "\u0345"]), max_size=80).map("".join))
def test_normalizing_a_long_text_in_pieces_equals_normalizing_it_whole(text):
    assert normalize(text, piece=3) == "".join(unicodedata.normalize("NFKC", text).casefold().split())


WHITESPACE = [chr(code) for code in range(0x110000) if chr(code).isspace()]


@settings(max_examples=500, deadline=None)
@given(st.text() | st.lists(st.sampled_from([*WHITESPACE, "a", "É", "ﬁ", "订", "\U0001f600", "\ud800"]), max_size=40).map("".join))
def test_normalizing_removes_every_whitespace_split_knows(text):
    # (a lone surrogate, as a log's escape may leave one, is kept as it is)
    assert normalize(text) == "".join(unicodedata.normalize("NFKC", text).casefold().split())


def test_casefold_keeps_every_character_whose_first_utf8_byte_says_so():
    # Of these, a text beyond ASCII is not casefolded (``_CASEFOLD_KEEPS``): checked on every character.
    kept = [chr(code) for code in range(0x80, 0x110000) if chr(code).encode("utf-8", "surrogatepass")[0] in _CASEFOLD_KEEPS]
    assert len(kept) > 40000 and "订" in kept and "\ud800" in kept and "é" not in kept and "\u2126" not in kept
    assert [c for c in kept if c.casefold() != c] == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["A", "b", " ", "订单", "あ", "한", "\ue000", "\u0905", "ß", "Ω", "\u2132", "\ua640",
                                 "\uab70", "ﬁ", "\U00010400", "—", "\ud800"]), max_size=30).map("".join))
def test_normalizing_a_text_beyond_ascii_casefolds_what_it_must(text):
    assert normalize(text) == "".join(unicodedata.normalize("NFKC", text).casefold().split())


def test_every_whitespace_is_removed_alone_and_between_words():
    assert len(WHITESPACE) >= 25
    assert [normalize(f"a{space}B{space}") for space in WHITESPACE] == ["ab"] * len(WHITESPACE)


def test_key_terms_are_the_content_words_and_cjk_bigrams():
    assert key_terms("Never send EMAIL to the supplier's team -- only WeCom, don't-ask") == {
        "send", "email", "supplier's", "team", "wecom", "don't-ask"}
    assert key_terms("预算上限的是8000；改用 企业微信 和 微") == {"预算", "算上", "上限", "限的", "改用", "企业", "业微", "微信", "和", "微"}
    assert key_terms("'-' -- ab '--") == set()


def _key_terms_word_by_word(text: str) -> set[str]:
    # The definition, one word and one run at a time as found.
    folded = unicodedata.normalize("NFKC", text).casefold()
    terms = {w.strip("'-") for w in re.findall(r"[A-Za-z][A-Za-z'-]{2,}", folded)} - STOPWORDS
    for run in re.findall(r"[\u4e00-\u9fff]+", folded):
        terms.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            terms.add(run)
    return {t for t in terms if t and t not in CJK_STOP_BIGRAMS}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Never", " ", "the", "'", "-", "ab", "abc", "ABC", "订", "单", "的是", "\n", "ﬁle", "İx", "x'-"]),
                max_size=40).map("".join))
def test_key_terms_are_those_of_each_word_and_run_found(text):
    assert key_terms(text) == _key_terms_word_by_word(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["Never", "not", "NO", "don't", "do not", "cannot", "n", "o", "t", "'", " ", "-", "x", "ſ",
                                 "İ", "send", "email", "不要", "别", "特别", "别人", "禁止", "。", ".", "\n", "；", "ﬁ"]),
                max_size=40).map("".join))
def test_negations_are_found_as_each_word_and_sentence_alone_finds_them(text):
    # The definitions, one negation word and one sentence at a time.
    def holds_negation(part: str) -> bool:
        return any(_has_word(unicodedata.normalize("NFKC", part).casefold(), word) for word in NEGATIONS)

    assert has_negation(text) == holds_negation(text)
    terms = {"send", "email", "never"}
    sentences = re.split(r"(?<=[.!?])\s+|[\n。！？；;]", text)
    assert negates(negated_terms(text), terms) == any(
        holds_negation(s) and not key_terms(s).isdisjoint(terms - set(NEGATIONS)) for s in sentences)


def test_a_pin_is_located_where_people_state_it_else_wherever_it_occurs():
    rule = "Never email the customer, only WeCom"
    entries = [Entry(1, "user", [Block(TOOL_RESULT, f"docs say: {rule}")], 0, 1), Entry(2, "user", [Block(USER, rule)], 0, 2),
               Entry(3, "user", [Block(TOOL_RESULT, "the cap is 8000 tokens")], 0, 3)]
    stated, quoted = make_constraint(rule, "pin"), make_constraint("the cap is 8000 tokens", "pin")
    locate([stated, quoted], entries)
    assert (stated.first_stated, quoted.first_stated) == (2, 3)


def test_a_rules_path_is_one_fact_however_many_at_signs_it_holds():
    """A rule on "/home/alice@corp.example.com/src" (SSSD's home folders) had the facts "/home/alice" and
    "corp.example.com/src": `check --redact` masked the address in the rule and wrote it back together in "missing …"."""
    from ctxtop.context.rules.facts import find_paths

    assert find_paths("Never write outside /home/alice@corp.example.com/orders/src.") == ["/home/alice@corp.example.com/orders/src."]
    assert find_paths("pin node_modules/@types/node and ~/a@b/c") == ["node_modules/@types/node", "~/a@b/c"]


def test_a_rules_id_and_facts_come_from_its_text_as_shown():
    # An OSC 8 link's URL and an SGR colour are in the log's bytes, not in what anyone reads.
    rule = make_constraint("Never \x1b]8;;http://evil.example/\x1b\\email\x1b]8;;\x1b\\ the buyer, \x1b[31monly\x1b[0m WeCom", "auto")
    assert rule.id == "no-email-buyer-wecom"
    assert rule.facts == ["never", "only"]  # not "31" or "0m"


@pytest.mark.parametrize(("tool", "forbidden"), [
    ("send_email", True), ("mcp__gmail__send_message", True), ("mcp__outlook__send_mail", True), ("send_mail", True),
    ("mailgun_send", True), ("mcp__sendgrid__send", True), ("smtp_send", True),
    ("mcp__wecom__send_message", False), ("mcp__slack__post_message", False), ("Bash", False), ("Read", False),
    # A tool that only reads a mailbox sends nothing; one that writes a draft, replies or forwards is the channel.
    ("read_email_draft", False), ("mcp__gmail__search_threads", False), ("GmailGetMessage", False), ("list_emails", False),
    ("mcp__gmail__create_draft", True), ("reply_to_email", True), ("forward_email", True), ("email_customer", True),
])
def test_a_rule_against_email_forbids_the_tools_that_send_it_by_their_names(tool, forbidden):
    # A Gmail MCP server's tool is mcp__gmail__send_message: with no "email" in its name it got past "不要发邮件".
    [(kind, check)] = implied_checks(make_constraint("只允许用企业微信发通知，不要发邮件", "pin"))
    assert kind == "tool_name" and check(tool) == forbidden


@pytest.mark.parametrize(("rule", "negation"), [
    ("禁用 App Router", "禁用"), ("不允许推送到 main 分支", "不允许"), ("不许删除迁移文件", "不许"), ("避免使用全局变量", "避免"),
    ("切勿提交密钥", "切勿"), ("不准直接修改生产库", "不准"),
])
def test_a_chinese_prohibition_detection_knows_is_a_word_its_restatement_must_keep(rule, negation):
    # Detection took 禁用, 不许, 不允许, 避免 as prohibitions, but the facts did not: a summary that dropped the
    # prohibition and kept the rest read as the rule kept.
    assert negation in key_facts(rule) and has_negation(rule)
    summary = rule.replace(negation, "")
    assert WindowText(window_of(summary)).status(make_constraint(rule, "pin")).status != KEPT


@pytest.mark.parametrize(("rule", "checks"), [
    ("只允许用企业微信发通知，不要发邮件", ["tool_name"]),
    ("Do not use email; notify only via Slack", ["tool_name"]),
    ("Do not contact customers by phone, SMS, or email", ["tool_name", "phone"]),
    ("Never, ever send email to customers", ["tool_name"]),
    ("邮件一律不要发，用企业微信", ["tool_name"]),
    ("客户名单里的手机号不能出现在任何对外文本里", ["phone"]),
    # A negation elsewhere in the rule denies something else: email (or a phone number) is what it asks for, or allows.
    ("Always email the weekly report to the PM; never post it on Slack", []),
    ("Only notify via email, not via WeCom", []),
    ("Don't reply on Slack; use email for customers", []),
    ("不要用短信通知，用邮件通知", []),
    ("Never share a customer's phone number; email is fine", ["phone"]),
    ("Validate phone numbers before saving; never skip validation", []),
])
def test_a_rule_forbids_email_or_phone_numbers_only_where_its_negation_names_them(rule, checks):
    assert [kind for kind, _ in implied_checks(make_constraint(rule, "pin"))] == checks


@pytest.mark.parametrize(("text", "phone"), [
    ("联系张先生 13800138000", True), ("手机13800138000", True), ("call 138-0013-8000", True),
    ("tel +86 138 0013 8000", True), ("call me at +1 415 555 0132", True), ("call +44 20 7946 0958", True),
    ('{"to": "+8613800138000"}', True), ("log_15912345678.txt", True),
    # Digits inside a hash or an id, a fraction's decimals, a version's build metadata: no number anyone calls.
    ("git checkout 3f8a13800138000e9c1d", False), ("git show a9f15012345678bcd", False),
    ("sleep 0.13579246801", False), ("pip install foo==1.2.3+20130313144700", False),
    ("id 9f86d08113912345678f0", False),
])
def test_the_audits_phone_numbers_are_not_hashes_fractions_or_versions(text, phone):
    from ctxtop.context.audit.violations import PHONE

    assert (PHONE.search(text) is not None) == phone


def test_a_rule_restated_under_a_label_is_the_same_rule():
    # The user reminds the agent of a rule after a compaction: one rule, first stated where it was first stated,
    # not a second one that doubles each violation and reads "paraphrased" where the first is kept.
    texts = ["Never send email to customers; use Slack only.", "ok", "Reminder: never send email to customers; use Slack only.",
             "不要发邮件。", "再次提醒：不要发邮件。", "Important: never push to main or release branches."]
    entries = [Entry(i, "user", [Block(USER, text)], 0, i) for i, text in enumerate(texts, 1)]
    assert [(c.text, c.first_stated) for c in detect_constraints(entries)] == [
        ("Never send email to customers; use Slack only.", 1), ("不要发邮件。", 4),
        ("Important: never push to main or release branches.", 6)]
