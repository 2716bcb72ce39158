"""The compaction view: what one compaction did, on screen ([ ], c, Esc) and in `export --compaction K`."""

from __future__ import annotations

import json
import os

import pytest
from textual.widgets import Static

from ctxtop.context.audit.lost import MAX_LOST_ITEMS
from ctxtop.context.tracker import Tracker
from ctxtop.tui.app import CtxtopApp
from ctxtop.tui.cli import main
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.widgets.compaction import CompactionView, rules_text
from ctxtop.tui.widgets.window_list import WindowList

from ..conftest import DATA, SHARED_FIXTURES
from .test_app import SIZE, demo_app, rendered_text, settle, until


def test_the_demo_first_compaction_view_holds_the_incident():
    view = Tracker.open(str(demo_path()), window=DEMO_WINDOW).compaction_view(1)
    assert (view["message"], view["reported"]) == (204, {"before": 6415, "after": 1298})
    statuses = {r["text"][:6]: (r["before"], r["after"]) for r in view["rules"]}
    assert statuses == {"预算上限 8": ("kept", "paraphrased"), "只允许用企业": ("kept", "lost"), "客户名单里的": ("kept", "lost")}
    # What this compaction did to each: the budget rule was only paraphrased here; it is lost at 306, and its
    # breach at 386 follows that loss (the second compaction's view and the banner tell it so).
    assert [(v["rule"], v["became"], v["lost_at"], v["broken_at"]) for v in view["later_violations"]] == [
        ("wecom-only", "lost", 204, 388), ("no-phone-numbers", "lost", 204, 388)]
    second = Tracker.open(str(demo_path()), window=DEMO_WINDOW).compaction_view(2)
    assert [(v["rule"], v["became"], v["lost_at"], v["broken_at"]) for v in second["later_violations"]] == [
        ("budget-8000", "lost", 306, 386)]
    # Nothing survived as it was: the history before the boundary was summarized, the summary arrived.
    assert sum(t["kept"] for t in view["categories"].values()) == 0
    assert view["categories"]["tool_result"]["summarized"] > 0 and view["categories"]["summary"]["added"] > 0
    assert view["summary"].startswith("This session is being continued")
    assert "8000 元" in view["facts_lost"]["numbers"]


def test_what_a_codex_compaction_carries_again_word_for_word_is_kept():
    # Codex's replacement_history holds the user's messages again: they were listed as summarized away
    # and added anew (46 of the 51 parts of the real rollout's were the same bytes as before).
    view = Tracker.open(str(DATA / "codex_remote_compaction.jsonl")).compaction_view(1)
    fates = [(block["message"], block["category"], block["fate"]) for block in view["blocks"]]
    assert (4, "user", "kept") in fates and (9, "user", "added") not in fates
    assert view["categories"]["user"] == {"kept": 13, "cleared": 0, "summarized": 0, "dropped": 0, "added": 2}
    assert view["categories"]["tool_call"]["summarized"] > 0  # what it does not carry is still summarized


@pytest.mark.parametrize(("log", "number"), [
    ("claude_microcompact.jsonl", 1), ("claude_compact.jsonl", 1), ("codex_remote_compaction.jsonl", 1),
    ("codex_local_compaction.jsonl", 1), ("openhands_condensation.json", 1),
])
def test_the_view_adds_up_to_the_windows_on_both_sides(log, number):
    # A cleared tool result still costs its placeholder: it is what the model saw instead, so it is
    # counted among what arrived, and "kept" + "new" is the window after, as the headline gives it.
    view = Tracker.open(str(DATA / log)).compaction_view(number)
    totals = view["categories"].values()
    assert sum(t["kept"] + t["cleared"] + t["summarized"] + t["dropped"] for t in totals) == view["estimated"]["before"]
    assert sum(t["kept"] + t["added"] for t in totals) == view["estimated"]["after"]
    assert sum(b["tokens"] for b in view["blocks"] if b["fate"] in ("kept", "added")) == view["estimated"]["after"]


@pytest.mark.parametrize(("log", "note"), [
    ("claude_microcompact.jsonl", "_No summary: tool results were cleared to a placeholder; nothing was cut._"),
    ("openhands_condensation.json", None),  # (a summary: no note)
])
def test_a_compaction_without_a_summary_says_what_it_did_instead(capsys, log, note):
    # A microcompact cuts nothing: "the history was cut" told the user the opposite of what happened.
    assert main(["export", str(DATA / log), "--compaction", "1", "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert "the history was cut" not in out
    assert note is None or note in out


def test_export_a_compaction_as_markdown_and_json(capsys):
    assert main(["export", "--demo", "--compaction", "1", "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "6,415 → 1,298" in text and "| wecom-only | kept | lost |" in text and "| lost at 204 | 388 |" in text
    assert "| budget-8000 | weakened at 204 |" not in text  # (broken after the second compaction lost it)
    # Named for what they count (calls the drift alert counts are another measure: one call repeated after it).
    assert "calls made again from before it: " in text and "files read again: " in text and "repeated calls" not in text
    assert main(["export", "--demo", "--compaction", "2", "--format", "md"]) == 0
    assert "| budget-8000 | lost at 306 | 386 |" in capsys.readouterr().out
    assert main(["export", "--demo", "--compaction", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["message"] == 306
    assert main(["export", "--demo", "--compaction", "4"]) == 2
    assert "the session has 3" in capsys.readouterr().err


MAROT = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.mark.skipif(not MAROT.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_the_view_does_not_count_a_sample_of_lost_facts_as_all_of_them():
    # The real Claude Code 2.1.39 compaction lost more paths than the audit's 50: the view showed two paths and a
    # third cut mid-name, then "(+38)": 12 counted as shown, and an exact-looking total where Markdown and HTML say
    # the list is a sample.
    view = Tracker.open(str(MAROT)).compaction_view(1)
    paths = view["facts_lost"]["paths"]
    assert len(paths) == MAX_LOST_ITEMS
    line = next(line for line in rules_text(view).plain.splitlines() if line.startswith("paths: "))
    listed, _, more = line.removeprefix("paths: ").partition(" (+")
    shown = listed.split(", ")
    assert shown == paths[:len(shown)]  # whole paths: none cut in the middle
    assert more == f"{MAX_LOST_ITEMS - len(shown)} more, and maybe others)"


@pytest.mark.parametrize(("log", "asked", "said"), [
    ("claude_compact.jsonl", "2", "compaction 2: the session has 1 compaction(s), 1 to 1"),
    # "the session has 0" read as a count of something unnamed
    ("claude_rewind.jsonl", "1", "compaction 1: the session has no compaction"),
])
def test_a_compaction_the_session_does_not_have_is_named_in_one_line(capsys, log, asked, said):
    assert main(["export", str(DATA / log), "--compaction", asked]) == 2
    assert capsys.readouterr().err == f"ctxtop: error: {said}\n"


@pytest.mark.parametrize("more", [["--at", "100"], ["--strategies"], ["--strategy", "clear_tool_results"], ["--budget", "500"]])
def test_export_of_a_compaction_refuses_what_only_a_snapshot_uses(capsys, more):
    # The compaction view is of the compaction, not of a message: an --at or a preview asked for was left out unsaid.
    assert main(["export", "--demo", "--compaction", "1", *more]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and more[0] in err


async def test_brackets_open_the_compaction_view_and_escape_closes_it():
    app = demo_app(at=100)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 100)
        view = app.query_one(CompactionView)
        assert not view.is_open
        await pilot.press("right_square_bracket")
        await settle(pilot, app, 204)
        assert await until(pilot, lambda: view.is_open and view.view["message"] == 204)
        shown = rendered_text(app, app.query_one("#compaction-headline", Static)) + rendered_text(app, app.query_one("#compaction-rules", Static))
        assert "6,415 → 1,298" in shown and "lost at 204 → broken at 388" in shown and shown.count("✘ lost") == 2
        await pilot.press("right_square_bracket")
        await settle(pilot, app, 306)
        assert await until(pilot, lambda: view.view["message"] == 306)
        await pilot.press("escape")
        await pilot.pause()
        assert not view.is_open and app.query_one("#main").display
        await pilot.press("c")  # the compaction at or before the cursor
        assert await until(pilot, lambda: view.is_open and view.view["message"] == 306)


async def test_an_open_compaction_view_follows_the_cursor_and_has_the_focus():
    app = demo_app(at=100)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 100)
        view = app.query_one(CompactionView)
        await pilot.press("right_square_bracket")
        assert await until(pilot, lambda: view.is_open and view.view["message"] == 204)
        assert app.focused is view  # ↓ and PgDn scroll it
        await pilot.press("right")  # still after the first compaction, before the second
        await settle(pilot, app, 205)
        assert view.is_open and view.view["message"] == 204
        await pilot.press("end")
        assert await until(pilot, lambda: view.view is not None and view.view["message"] == 383)
        await pilot.press("home")  # before the first compaction: nothing to show
        await settle(pilot, app, 1)
        assert await until(pilot, lambda: not view.is_open)
        assert isinstance(app.focused, WindowList)


async def test_the_banner_speaks_of_the_cursor_and_counts_what_comes_later():
    from .test_app import plain

    app = demo_app(at=150)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 150)
        banner = app.query_one("#banner", Static)
        assert await until(pilot, lambda: "later in the session" in plain(banner))
        assert banner.has_class("-ahead") and "3 lost or weakened, 3 broken (from message 204)" in plain(banner)
        app._go(205)
        await settle(pilot, app, 205)
        text = plain(banner)
        assert not banner.has_class("-ahead") and "at message 205: 3 rule(s) lost or weakened" in text and ", 0 broken" in text
        # (within the row: the counts come before the details; the budget rule, weakened here, is lost at 306)
        assert "later: 1 lost or weakened, 3 broken (from message 306)" in text
        app._go(386)
        await settle(pilot, app, 386)
        assert "lost at 306 → broken at 386" in plain(banner)  # paraphrased at 204, then gone with the second summary
        app._go(388)
        await settle(pilot, app, 388)
        assert "lost at 204 → broken at 388" in plain(banner) and "later" not in plain(banner)


async def test_a_log_replaced_underneath_does_not_keep_the_compaction_view_of_the_one_read_before(tmp_path):
    """The view open over the panes was of the log before: replaced by one with no compaction so far, it showed
    "Compaction 3 at message 383" over a session of 150 messages."""
    log = tmp_path / "live.jsonl"
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        view = app.query_one(CompactionView)
        await pilot.press("c")
        assert await until(pilot, lambda: view.is_open and view.view["message"] == 383)
        (tmp_path / "new.jsonl").write_bytes(b"".join(lines[:150]))  # no compaction in it yet
        os.replace(tmp_path / "new.jsonl", log)
        assert await until(pilot, lambda: app.available == 150)
        await settle(pilot, app)
        assert await until(pilot, lambda: not view.is_open and app.state.compaction is None)


async def test_an_open_compaction_view_follows_a_compaction_that_arrives_while_following(tmp_path):
    log = tmp_path / "live.jsonl"
    lines = demo_path().read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:250]))
    app = CtxtopApp(str(log), window=DEMO_WINDOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        view = app.query_one(CompactionView)
        await pilot.press("c")
        assert await until(pilot, lambda: view.is_open and view.view["message"] == 204)
        with open(log, "ab") as handle:
            handle.writelines(lines[250:320])
        assert await until(pilot, lambda: view.is_open and view.view["message"] == 306)


async def test_the_banner_does_not_count_a_rule_a_later_compaction_put_back(tmp_path):
    """A rule lost at 204 that the summary at 306 states again (a re-injection, CLAUDE.md read again) is kept at 310,
    as the Constraints pane says: the banner went on counting it among the rules lost "at message 310"."""
    from .test_app import plain

    lines = demo_path().read_text(encoding="utf-8").splitlines(keepends=True)
    summary = json.loads(lines[306])
    summary["message"]["content"] += "\n只允许用企业微信发通知，不要发邮件"
    lines[306] = json.dumps(summary, ensure_ascii=False) + "\n"
    log = tmp_path / "restored.jsonl"
    log.write_text("".join(lines[:330]), encoding="utf-8")
    app = CtxtopApp(str(log), window=DEMO_WINDOW, at=310)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 310)
        assert await until(pilot, lambda: app.audit is not None and len(app.audit.compactions) == 2)
        await settle(pilot, app, 310)
        statuses = {c["id"]: c["status"] for c in app.view.snapshot["constraints"]}
        assert statuses["wecom-only"] == "kept" and statuses["no-phone-numbers"] == "lost"
        banner = plain(app.query_one("#banner", Static))
        assert "at message 310: 2 rule(s) lost or weakened" in banner and "wecom-only" not in banner


async def test_p_in_the_compaction_view_does_not_pin_a_block_hidden_behind_it():
    """With the view open over the window list, p pinned the list's selected block, which was out of sight."""
    app = demo_app(at=390)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 390)
        view = app.query_one(CompactionView)
        await pilot.press("c")
        assert await until(pilot, lambda: view.is_open)
        before = [c.text for c in app.constraints]
        await pilot.press("p")
        await pilot.pause(0.3)
        assert [c.text for c in app.constraints] == before
        assert "compaction view" in list(app._notifications)[-1].message


async def test_u_in_the_compaction_view_does_not_unpin_a_rule_out_of_sight():
    """With the view open over the panes, u unpinned (or hid) the rule highlighted in the Constraints pane behind it."""
    app = demo_app(at=390)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, 390)
        await pilot.press("2")  # the Constraints pane, its first rule highlighted
        view = app.query_one(CompactionView)
        await pilot.press("c")
        assert await until(pilot, lambda: view.is_open)
        before = [c.id for c in app.constraints]
        await pilot.press("u")
        await pilot.pause(0.3)
        assert [c.id for c in app.constraints] == before
        assert "compaction view" in list(app._notifications)[-1].message
