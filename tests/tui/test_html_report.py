"""The HTML report (`export --format html`), loaded in a real headless browser: it renders, loads nothing, shows the rules."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ctxtop.tui.cli import main

BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser")
BROWSER = next((found for name in BROWSERS if (found := shutil.which(name))), None)


def test_the_report_is_one_page_that_escapes_log_text(capsys, tmp_path):
    log = tmp_path / "hostile.jsonl"
    log.write_text('{"type":"user","sessionId":"s","uuid":"u1","message":{"role":"user","content":'
                   '"Never send <script>alert(1)</script> to \\u001b]0;pwned\\u0007 anyone; budget cap 100."}}\n')
    assert main(["export", str(log), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!doctype html>") and "<script" not in page and "&lt;script&gt;" in page
    assert "\x1b" not in page and "\x07" not in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


@pytest.mark.skipif(BROWSER is None, reason="no headless Chromium here (CI installs chromium-headless-shell)")
def test_the_demo_report_renders_in_a_real_browser_without_errors(tmp_path):
    report = tmp_path / "report.html"
    assert main(["export", "--demo", "--format", "html", "-o", str(report)]) == 0
    common = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([*common, "--dump-dom", report.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    # The rules by their text, their fate at each compaction and the loss linked to the later violation.
    for shown in ("只允许用企业微信发通知，不要发邮件", "客户名单里的手机号不能出现在任何对外文本里", "compaction at 204",
                  "lost at 204 → broken at 388", "6,415 → 1,298", "<svg"):
        assert shown in dom.stdout, shown
    # The page says nothing on the browser's console: no load its policy blocked (it loads nothing), no error.
    assert ":CONSOLE" not in dom.stderr, [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    shot = tmp_path / "report.png"
    subprocess.run([*common, f"--screenshot={shot}", "--window-size=1200,1600", report.as_uri()], capture_output=True, timeout=120)
    assert shot.stat().st_size > 20_000  # a drawn page, not a blank one


def test_the_report_says_how_many_lost_facts_it_leaves_out(capsys):
    # The demo's first compaction lost 50 numbers: the page shows 20 and says so (the JSON and Markdown hold all 50).
    assert main(["export", "--demo", "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "<i>numbers</i>: " in page and "(+30 more, and maybe others)" in page
    assert "A sample: the audit lists at most 50 lost facts of each kind." in page
    # The Markdown counts them "at least" too: a kind's list stops at 50.
    assert main(["export", "--demo", "--format", "md"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 204 |")]
    assert rows and rows[0].rstrip(" |").split("| ")[-1].startswith("≥")


def test_each_compaction_in_the_report_tells_its_drift_and_forensics_as_the_other_views_do(capsys):
    # The report's compaction sections left out the drift and the forensics that the TUI's compaction view and
    # export --compaction K show: the page said nothing of the demo's first compaction being a
    # constraint_evaporation with no recovery, nor of what it cost.
    assert main(["export", "--demo", "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "calls made again from before it: 0, files read again: 0, edits applied again: 0" in page
    assert "generation 1; constraint_evaporation; recovery none" in page
    assert "summarization 6,575 estimated tokens — $0.0298, pays back in 19.3 turns" in page
    assert "generation 3; no failure mode found; recovery none" in page


@pytest.mark.parametrize("more", [["--strategies"], ["--strategy", "clear_tool_results"], ["--budget", "500"]])
def test_the_report_refuses_strategy_previews_it_does_not_hold(capsys, more):
    # `export --format html --strategies` wrote the report without them, exit 0: the previews asked for were left out
    # unsaid (the report holds none; the JSON and Markdown snapshots do).
    assert main(["export", "--demo", "--format", "html", *more]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"ctxtop: error: --format html is the report, which holds no strategy previews: leave out {more[0]}\n"
