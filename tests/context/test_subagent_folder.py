"""A session's subagents/ folder as a hostile or careless disk has it: a link to /, or out of the session's folder,
a link loop, a folder of a million entries. Sub-agent transcripts are looked for in it and the folders directly in
it only, through no link out of the session's folder, and among a bounded number of entries: what was not looked
at is said, never a walk of the whole disk, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ctxtop.context.fleet.reuse import Siblings, companion_files
from ctxtop.context.window import subagent_files
from ctxtop.context.window.session import Session

from ..conftest import SHARED_FIXTURES

SESSION = SHARED_FIXTURES / "claude-code" / "marot_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
AGENTS = SESSION.with_suffix("") / "subagents"
pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
CEILING = 120  # seconds: walking the whole disk takes minutes; looking in one folder, a fraction of one


def session_in(tmp_path):
    log = tmp_path / SESSION.name
    shutil.copyfile(SESSION, log)
    log.with_suffix("").mkdir()
    return log


def export(log) -> dict:
    result = subprocess.run([sys.executable, "-m", "ctxtop", "export", str(log)], capture_output=True, text=True,
                            timeout=CEILING, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)["subagents"]


def test_a_subagents_folder_linked_to_the_root_is_not_walked(tmp_path):
    log = session_in(tmp_path)
    (log.with_suffix("") / "subagents").symlink_to("/")
    listed = export(log)
    assert listed["files"] == 0 and "outside the session's folder" in listed["skipped"]
    assert companion_files(log, Siblings()) == []


def test_a_subagents_folder_linked_out_of_the_session_is_not_read(tmp_path):
    log = session_in(tmp_path)
    shutil.copytree(AGENTS, tmp_path / "elsewhere")
    (log.with_suffix("") / "subagents").symlink_to(tmp_path / "elsewhere")
    session = Session.open(log)
    assert session.subagents is not None and session.subagents.agents == []
    assert "outside the session's folder" in session.subagents.skipped


def test_a_subagents_folder_linked_within_the_session_is_read(tmp_path):
    log = session_in(tmp_path)
    shutil.copytree(AGENTS, log.with_suffix("") / "kept")
    (log.with_suffix("") / "subagents").symlink_to("kept")
    session = Session.open(log)
    assert len(session.subagents.agents) == 2 and session.subagents.skipped is None
    assert len(companion_files(log, Siblings())) == 2  # (no .meta.json in the fixture)


def test_link_loops_in_and_of_the_subagents_folder_end(tmp_path):
    log = session_in(tmp_path)
    nested = log.with_suffix("") / "subagents"
    shutil.copytree(AGENTS, nested)
    (nested / "up").symlink_to("..")
    (nested / "here").symlink_to(".")
    (nested / "workflow").mkdir()
    (nested / "workflow" / "back").symlink_to("../..")
    assert len(Session.open(log).subagents.agents) == 2
    loop = tmp_path / "loop"
    loop.mkdir()
    shutil.copyfile(SESSION, loop / SESSION.name)
    (loop / SESSION.stem).mkdir()
    (loop / SESSION.stem / "subagents").symlink_to("subagents")  # a link to itself
    assert Session.open(loop / SESSION.name).subagents.agents == []


def test_a_workflows_transcripts_one_folder_deeper_are_found(tmp_path):
    log = session_in(tmp_path)
    (log.with_suffix("") / "subagents" / "wf-1").mkdir(parents=True)
    shutil.copyfile(AGENTS / "agent-a881341.jsonl", log.with_suffix("") / "subagents" / "wf-1" / "agent-a881341.jsonl")
    assert [agent.id for agent in Session.open(log).subagents.agents] == ["a881341"]


def test_the_entries_looked_at_are_bounded_and_the_rest_said(tmp_path, monkeypatch):
    monkeypatch.setattr(subagent_files, "MAX_ENTRIES", 5)
    log = session_in(tmp_path)
    nested = log.with_suffix("") / "subagents"
    nested.mkdir()
    for n in range(12):
        (nested / f"note-{n:02}.txt").write_text("x")
    transcripts, skipped = subagent_files.nested_transcripts(log)
    assert transcripts == [] and "5 entries" in skipped


def test_polling_walks_no_link_to_a_folder(tmp_path):
    from watchdog.utils.dirsnapshot import DirectorySnapshot

    from ctxtop.tui.tail import stat_without_folder_links

    log = session_in(tmp_path)
    (log.with_suffix("") / "subagents").symlink_to("/")
    (log.with_suffix("") / "wf").mkdir()
    (log.with_suffix("") / "wf" / "up").symlink_to("..")
    (log.with_suffix("") / "wf" / "agent-x.jsonl").symlink_to(SESSION)  # a link to a file is still followed
    snapshot = DirectorySnapshot(str(log.with_suffix("")), recursive=True, stat=stat_without_folder_links)
    assert len(snapshot.paths) == 5  # the folder, subagents, wf, up and agent-x.jsonl: nothing through a link
    assert snapshot.size(str(log.with_suffix("") / "wf" / "agent-x.jsonl")) == SESSION.stat().st_size


def test_a_sub_agent_read_before_its_task_call_gets_its_type_when_the_call_arrives(tmp_path):
    # Followed live, a sub-agent transcript read before the main log held the Task call that started it was
    # typed "agent" with its prompt for a task, and stayed so: the Agents pane never said "claude-code-guide".
    from ctxtop.context.window.follow import LogFollower

    lines = SESSION.read_bytes().splitlines(keepends=True)
    log = tmp_path / SESSION.name
    log.write_bytes(b"".join(lines[:100]))
    (log.with_suffix("") / "subagents").mkdir(parents=True)
    shutil.copyfile(AGENTS / "agent-a881341.jsonl", log.with_suffix("") / "subagents" / "agent-a881341.jsonl")
    follower = LogFollower(log)
    agent = follower.session.subagents.find("a881341")
    assert agent is not None and agent.kind == "agent"
    with open(log, "ab") as handle:
        handle.writelines(lines[100:])
    update = follower.poll([log])
    agent = follower.session.subagents.find("a881341")
    assert update is not None and update.subagents
    assert (agent.kind, agent.description) == ("claude-code-guide", "Research Claude hook output")


@pytest.mark.parametrize("told", ["the meta file", "nothing"])
def test_a_sub_agents_meta_file_written_after_its_transcript_gives_it_its_type(tmp_path, told):
    # Followed live, `agent-<id>.meta.json` written after the transcript was never read: the Agents pane kept
    # "agent" and the first prompt where a fresh read says the meta file's type and description.
    from ctxtop.context.window.follow import LogFollower

    lines = SESSION.read_bytes().splitlines(keepends=True)
    log = tmp_path / SESSION.name
    log.write_bytes(b"".join(lines[:300]))  # (before the Task call that would type it)
    folder = log.with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    shutil.copyfile(AGENTS / "agent-a881341.jsonl", folder / "agent-a881341.jsonl")
    follower = LogFollower(log)
    assert follower.session.subagents.find("a881341").kind == "agent"
    meta = folder / "agent-a881341.meta.json"
    meta.write_text(json.dumps({"agentType": "Explore", "description": "Look around"}))
    update = follower.poll([meta] if told == "the meta file" else None)
    agent = follower.session.subagents.find("a881341")
    assert update is not None and update.subagents
    assert (agent.kind, agent.description) == ("Explore", "Look around")
    fresh = Session.open(log).subagents.find("a881341")
    assert (fresh.kind, fresh.description) == (agent.kind, agent.description)
