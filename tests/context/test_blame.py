"""Which compaction a broken rule is told as following (``audit.blame``): the one that last lost or weakened
it, unless the rule was back in the window when the agent broke it."""

from __future__ import annotations

from ctxtop.context.audit.alerts import AlertKind
from ctxtop.context.audit.blame import GivenAgain
from ctxtop.context.rules.constraints import make_constraint
from ctxtop.context.tracker import Tracker
from ctxtop.parsers.model import INJECTED, SYSTEM, TOOL_RESULT, USER, Block, Entry
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

# The demo's user message just before the agent e-mails the customer list (388).
LAST_ASK = "汇总好了就把本周结果发给采购部，顺便把 PO-1503 处理掉。"
WECOM_ONLY = "只允许用企业微信发通知，不要发邮件"


def stories(tracker: Tracker) -> dict[tuple[str | None, int], int | None]:
    """Each violation (rule, message) → the message of the compaction it is told as following."""
    found = {}
    for alert in tracker.alerts():
        if alert.kind is AlertKind.VIOLATION:
            loss = tracker.loss_behind(alert)
            found[(alert.constraint, alert.message)] = loss.message if loss is not None else None
    return found


def test_each_breach_of_the_demo_follows_the_compaction_that_last_lost_its_rule():
    tracker = Tracker.open(str(demo_path()), window=DEMO_WINDOW)
    # The budget cap was paraphrased at 204 and lost at 306: its breach follows 306, not 204.
    assert stories(tracker) == {("budget-8000", 386): 306, ("wecom-only", 388): 204, ("no-phone-numbers", 388): 204}
    assert tracker.cursor_alerts(386).story.message == 306


def test_a_rule_the_user_gave_again_before_the_breach_is_no_compaction_s_fault(tmp_path):
    # The user says the e-mail rule again, word for word, in the message before the agent e-mails (instead of
    # what it asked there): the window holds it when it is broken. It was still told "lost at 204 → broken at 388".
    log = tmp_path / "restated.jsonl"
    text = demo_path().read_text(encoding="utf-8")
    assert LAST_ASK in text
    log.write_text(text.replace(LAST_ASK, f"记住：{WECOM_ONLY}"), encoding="utf-8")
    tracker = Tracker.open(str(log), window=DEMO_WINDOW)
    assert stories(tracker) == {("budget-8000", 386): 306, ("wecom-only", 388): None, ("no-phone-numbers", 388): 204}
    first = tracker.compaction_view(1)
    assert [(v["rule"], v["broken_at"]) for v in first["later_violations"]] == [("no-phone-numbers", 388)]
    seen = tracker.cursor_alerts(388)
    assert seen.here[-1].constraint == "no-phone-numbers" and seen.story.message == 204  # (the breach still told)


def test_where_a_rule_is_given_again_is_read_once_then_only_where_the_log_may_have_changed():
    rule = make_constraint("Never send email to customers", "pin", id="no-email")
    entries = [Entry(1, "user", [Block(USER, "never SEND email   to customers.")], 0, 1),  # (case and spaces aside)
               Entry(2, "tool", [Block(TOOL_RESULT, "Never send email to customers")], 0, 2),  # a quote, not a giving
               Entry(3, "user", [Block(USER, "ok")], 0, 3)]
    given = GivenAgain([rule])
    given.extend(entries, final=2)
    assert given.given == {"no-email": [1]}
    # The last entry was not final: a followed log merged more into it, and appended another.
    entries[2].blocks.append(Block(INJECTED, "Reminder: never send email to customers"))
    entries.append(Entry(4, "system", [Block(SYSTEM, "Never send email to customers")], 0, 4))
    given.extend(entries, final=4)
    assert given.given == {"no-email": [1, 3, 4]}
    given.extend(entries, final=4)  # nothing new: nothing read again, nothing counted twice
    assert given.given == {"no-email": [1, 3, 4]}


def test_the_banner_tells_the_story_of_a_breach_at_the_cursor_that_has_one(tmp_path):
    # The user asks again in other words: a rule of its own (wecom-only-2), broken with the others at 388 and
    # never lost. It came last among the three breaches of that message, and the banner, reading only the last
    # one, told no story at 388, while the first compaction's view tells two breaches of 388 as its doing.
    log = tmp_path / "asked-again.jsonl"
    log.write_text(demo_path().read_text(encoding="utf-8").replace(LAST_ASK, "记住：只能用企业微信通知，别发邮件。"), encoding="utf-8")
    tracker = Tracker.open(str(log), window=DEMO_WINDOW)
    assert stories(tracker) == {("budget-8000", 386): 306, ("wecom-only", 388): 204, ("no-phone-numbers", 388): 204,
                                ("wecom-only-2", 388): None}
    seen = tracker.cursor_alerts(388)
    assert seen.story is not None and seen.story.message == 204
    assert seen.here[-1].constraint in ("wecom-only", "no-phone-numbers")  # (the breach the banner's detail shows)
    assert {a.constraint for a in seen.here if a.message == 388} == {"wecom-only", "no-phone-numbers", "wecom-only-2"}
