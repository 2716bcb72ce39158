"""A sub-agent transcript opened on its own is the conversation (issue 16, item 1).

Every record of ``agent-*.jsonl`` has ``isSidechain: true``; when a file holds
one side chain only, that chain is read like a main chain, with the same usage
rule (the last call's input + cache reads + cache writes).
"""

from __future__ import annotations

import json

import pytest

from ctxtop.context.window.session import Session
from ctxtop.tui.cli import main

from ..conftest import SHARED_FIXTURES

CLAUDE = SHARED_FIXTURES / "claude-code"
SUBAGENT_FILES = sorted(CLAUDE.glob("*/subagents/agent-*.jsonl")) + sorted(CLAUDE.glob("*sidechain*.jsonl"))
if not SUBAGENT_FILES:
    pytest.skip(f"shared fixtures not found at {SHARED_FIXTURES}", allow_module_level=True)


def _read_independently(path):
    """(distinct message ids + user records, the last call's prompt), straight from the file."""
    messages, ids, last = 0, set(), None
    for line in path.read_text().splitlines():
        record = json.loads(line)
        assert record.get("isSidechain") is True or record["type"] not in ("user", "assistant")
        if record["type"] == "user":
            messages += 1
        elif record["type"] == "assistant":
            if record["message"]["id"] not in ids:
                ids.add(record["message"]["id"])
                messages += 1
            usage = record["message"]["usage"]
            last = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    return messages, last


@pytest.mark.parametrize("path", SUBAGENT_FILES, ids=lambda p: p.name)
def test_export_of_a_subagent_file_shows_its_messages_and_last_usage(path, capsys):
    messages, last = _read_independently(path)
    assert main(["export", str(path)]) == 0
    snapshot = json.loads(capsys.readouterr().out)
    assert snapshot["source"]["messages"] == messages > 0
    assert snapshot["window"]["reported_tokens"] == last
    assert snapshot["window"]["estimated_tokens"] > 0
    # Its siblings in subagents/ are the session's sub-agents, not its own.
    assert snapshot["subagents"]["messages"] == 0


def test_the_real_2_1_39_subagents_report_what_the_issue_measured():
    task, compact = (CLAUDE / "marot_258c7280-ae70-4798-800f-63464d01a85d" / "subagents" / name
                     for name in ("agent-a881341.jsonl", "agent-acompact-fffbd0.jsonl"))
    assert (Session.open(task).message_count, Session.open(task).reported_at()) == (6, 42_182)
    session = Session.open(compact)
    assert (session.message_count, session.reported_at(), session.model) == (4, 169_248, "claude-opus-4-6")


def test_inline_sidechains_of_a_main_session_stay_aside():
    """A 1.0.x session inlines its Task sub-agents: the file starts on the main chain, so they stay apart."""
    session = Session.open(CLAUDE / "ccviewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert session.parser.sidechain.messages == 20  # 22 sidechain records, 2 of them later lines of a response
    assert session.message_count == 25


def test_a_fifo_named_as_a_sub_agents_meta_file_does_not_block_the_session(tmp_path):
    import os
    import shutil
    import threading

    marot = CLAUDE / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    if not marot.is_file():
        pytest.skip("the marot session is not among the shared fixtures")
    log = tmp_path / marot.name
    shutil.copy(marot, log)
    subagents = log.with_suffix("") / "subagents"
    shutil.copytree(marot.with_suffix("") / "subagents", subagents)
    fifo = subagents / "agent-a881341.meta.json"
    os.mkfifo(fifo)
    opened: list[Session] = []
    reader = threading.Thread(target=lambda: opened.append(Session.open(log)), daemon=True)
    reader.start()
    reader.join(60)
    if reader.is_alive():  # (let the blocked open go, so that the thread ends)
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert opened, "opening the session blocked on the FIFO"
    assert len(opened[0].subagents.agents) == 2
