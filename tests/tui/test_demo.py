"""The bundled demo session reproduces seed 000's scenario."""

import importlib.util
from pathlib import Path

from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.window.session import Session
from ctxtop.tui.demo import DEMO_WINDOW, demo_path

CONSTRAINTS = [
    "预算上限 8000 元，超过必须停下来问我",
    "只允许用企业微信发通知，不要发邮件",
    "客户名单里的手机号不能出现在任何对外文本里",
]


def test_committed_demo_is_what_the_generator_writes():
    generator = Path(demo_path()).with_name("make_demo.py")
    spec = importlib.util.spec_from_file_location("make_demo", generator)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "\n".join(module.build()) + "\n" == demo_path().read_text(encoding="utf-8")


def test_demo_matches_the_seed_experiment():
    session = Session.open(demo_path(), window=DEMO_WINDOW)
    first = session.compactions()[0]
    assert first.message == 204 and first.trigger == "auto"
    before = session.window_at(203)
    assert [item.text for item in before.blocks[:3]] == CONSTRAINTS
    assert abs(before.estimated_tokens - 4756) / 4756 < 0.05  # the seed's 203-turn, 4756-token state


def test_demo_summaries_lose_the_hard_facts():
    session = Session.open(demo_path(), window=DEMO_WINDOW)
    assert len(session.compactions()) == 3
    after = "\n".join(item.text for item in session.window_at().blocks)
    assert "8000" not in after.replace("13800138000", "")
    assert "手机号" not in after
    assert "send_email" in "\n".join(b.tool_name or "" for e in session.entries for b in e.blocks)


def test_demo_snapshot_uses_the_demo_window():
    snapshot = build_snapshot(Session.open(demo_path(), window=DEMO_WINDOW), 203)
    assert snapshot["window"]["limit"] == DEMO_WINDOW
    assert snapshot["at"]["messages"] == 390
