"""Claude Code transcripts: merging, sidechains, compaction markers and diagnostics."""

import json

import pytest

from ctxtop.parsers import parse
from ctxtop.parsers.model import INJECTED, REASONING, SUMMARY, SYSTEM_SNAPSHOT, TOOL_CALL, TOOL_RESULT, USER

from ..conftest import DATA


@pytest.fixture(scope="module")
def compact():
    return parse((DATA / "claude_compact.jsonl").read_bytes())


def test_detected_as_claude_code(compact):
    assert compact.name == "claude-code"


@pytest.mark.parametrize(
    "index, role, categories, uid",
    [
        (1, "user", [USER], "u1"),
        (2, "assistant", ["assistant", TOOL_CALL], "a1"),  # two lines of msg_1 merged
        (3, "user", [TOOL_RESULT], "u2"),
        (4, "assistant", ["assistant"], "a2"),
        (5, "user", [USER], "u3"),
        (6, "system", [], "b1"),
        (7, "user", [SUMMARY], "s1"),
        (8, "user", [USER], "u4"),
        (9, "assistant", ["assistant"], "a3"),
    ],
)
def test_entries_in_file_order(compact, index, role, categories, uid):
    entry = compact.entries[index - 1]
    assert (entry.index, entry.role, [b.category for b in entry.blocks], entry.uid) == (index, role, categories, uid)


def test_last_line_of_a_response_carries_its_usage(compact):
    merged = compact.entries[1]
    assert merged.usage.output_tokens == 20  # the first line said 5 (streaming partial)
    assert merged.usage.prompt_tokens == 110
    assert merged.blocks[1].tool_name == "Bash" and merged.blocks[1].tool_id == "toolu_1"


def test_compact_boundary_is_recorded(compact):
    boundary = compact.entries[5].compaction
    assert (boundary.kind, boundary.trigger, boundary.pre_tokens, boundary.post_tokens) == ("compact_boundary", "auto", 170, 60)
    assert boundary.preserved_ids == ("u3",)


def test_sidechain_kept_out_of_main_chain(compact):
    assert compact.sidechain.messages == 2
    assert all(e.uid not in ("sc1", "sc2") for e in compact.entries)


def test_diagnostics_are_counted_not_fatal(compact):
    d = compact.diagnostics
    assert d.malformed_lines == 2  # the non-JSON line and the user record whose message is a string
    assert d.unknown_records == 1  # brand-new-record
    assert d.skipped_records == 2  # file-history-snapshot, turn_duration
    assert d.torn_last_line


def test_harness_text_is_injected():
    parser = parse(b'{"type":"user","sessionId":"s","uuid":"1","message":{"role":"user","content":"<system-reminder>be nice</system-reminder>"}}\n'
                   b'{"type":"user","sessionId":"s","uuid":"2","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"skill text"}]}}\n'
                   b'{"type":"attachment","sessionId":"s","uuid":"3","attachment":{"type":"file"},"rendered":[{"content":"<system-reminder>file a.py</system-reminder>"}]}\n')
    assert [e.blocks[0].category for e in parser.entries] == [INJECTED, INJECTED, INJECTED]


def _record(kind: str, **fields) -> bytes:
    return json.dumps({"type": kind, "sessionId": "s", **fields}).encode() + b"\n"


def test_a_message_queued_while_the_agent_works_is_the_users_when_sent_in_the_turn():
    # Claude Code 2.1: a message typed during a turn is queued; "remove" sends it to the model within
    # the turn and nothing else logs it; a queued task notification is delivered as the next turn's
    # user record, and "dequeue" hands a queued command to the next turn, which logs it.
    notification = "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"
    log = b"".join([
        _record("user", uuid="1", message={"role": "user", "content": "run the tests"}),
        _record("queue-operation", operation="enqueue", content=notification),
        _record("queue-operation", operation="enqueue", content="never push to main"),
        _record("queue-operation", operation="remove"),
        _record("user", uuid="2", message={"role": "user", "content": notification}),
        _record("queue-operation", operation="enqueue", content="/compact"),
        _record("queue-operation", operation="dequeue"),
        _record("queue-operation", operation="remove"),  # nothing typed is left in the queue
    ])
    parser = parse(log)
    assert [(e.blocks[0].category, e.blocks[0].text) for e in parser.entries] == [
        (USER, "run the tests"), (USER, "never push to main"), (INJECTED, notification)]
    assert parser.entries[1].line == 4 and parser.entries[1].blocks[0].source is None  # its text is on line 3
    assert parser.diagnostics.skipped_records == 5


def test_a_queued_message_also_written_as_a_queued_command_attachment_counts_once():
    # A harness writing both the queue's records and the queued_command attachment, in either order.
    def attachment(uuid: str, text: str) -> bytes:
        return _record("attachment", uuid=uuid, attachment={"type": "queued_command", "prompt": text})

    log = b"".join([
        _record("user", uuid="1", message={"role": "user", "content": "run the tests"}),
        _record("queue-operation", operation="enqueue", content="never push to main"),
        _record("queue-operation", operation="remove"),
        attachment("2", "never push to main"),  # after the remove
        _record("queue-operation", operation="enqueue", content="keep the ERR_ prefix"),
        _record("queue-operation", operation="enqueue", content="reply in English"),
        attachment("3", "keep the ERR_ prefix"),  # before its remove
        _record("queue-operation", operation="remove"),
        _record("queue-operation", operation="remove"),  # the next one's
    ])
    texts = [e.blocks[0].text for e in parse(log).entries]
    assert texts == ["run the tests", "never push to main", "keep the ERR_ prefix", "reply in English"]


def test_microcompact_and_opaque_thinking():
    parser = parse((DATA / "claude_microcompact.jsonl").read_bytes())
    marker = parser.entries[5].compaction
    assert marker.kind == "microcompact" and marker.cleared_tool_ids == ("toolu_A",)
    assert marker.post_tokens == 510
    thinking = parser.entries[6].blocks[0]
    assert thinking.category == REASONING and thinking.opaque


def test_the_prompt_queue_keeps_typed_messages_and_notifications_apart_in_order():
    from ctxtop.parsers.claude_queue import MAX_QUEUED, PromptQueue

    queue = PromptQueue()
    for text in ("<task-notification>a</task-notification>", "first typed", "<task-notification>b</task-notification>", "second typed"):
        queue.put(text)
    assert queue.pop_typed() == "first typed"  # past any number of notifications waiting before it
    assert queue.pop_oldest() == "<task-notification>a</task-notification>"
    assert queue.discard("<task-notification>b</task-notification>") and not queue.discard("never queued")
    assert PromptQueue.restored(queue.saved()).pop_typed() == "second typed"  # (a saved index, or a poll)
    for n in range(MAX_QUEUED + 5):  # a hostile log cannot grow it without bound: the oldest go
        queue.put(f"<task-notification>{n}</task-notification>")
    assert len(queue) == MAX_QUEUED and "<task-notification>0</task-notification>" not in queue


def test_a_rewind_takes_the_abandoned_branch_out_of_the_window():
    # Esc Esc: the user took the conversation back to before "Read every order…" and asked again under the same
    # record. The first branch stays in the file; it was kept in the window (its 900-order tool output too), and
    # the next call's smaller prompt read as an implicit compaction.
    parser = parse((DATA / "claude_rewind.jsonl").read_bytes())
    assert [e.uid for e in parser.entries] == ["u1", "a1", "b2u", "b2a"]
    assert [e.usage.prompt_tokens for e in parser.entries if e.usage] == [18_000, 18_400]


def test_a_rewind_is_not_taken_across_a_compaction_nor_for_a_tool_result():
    lines = (DATA / "claude_rewind.jsonl").read_bytes().splitlines(keepends=True)
    boundary = _record("system", uuid="cb", parentUuid=None, logicalParentUuid="b1a2", subtype="compact_boundary",
                       content="Conversation compacted", compactMetadata={"trigger": "auto", "preTokens": 42_000})
    summary = _record("user", uuid="cs", parentUuid="cb", isCompactSummary=True,
                      message={"role": "user", "content": "This session is being continued from a previous conversation."})
    parser = parse(b"".join(lines[:6]) + boundary + summary + lines[6])  # "Only count…" under a1, after the compaction
    assert [e.uid for e in parser.entries][-4:] == ["b1a2", "cb", "cs", "b2u"]
    # Two tool results under one record (parallel calls: each under its own tool_use line) are no rewind.
    calls = [_record("user", uuid="p", parentUuid=None, message={"role": "user", "content": "check both"}),
             _record("assistant", uuid="c1", parentUuid="p", message={"id": "m", "role": "assistant", "content": [
                 {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}]}),
             _record("user", uuid="r1", parentUuid="c1", message={"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": "A"}]}),
             _record("user", uuid="r2", parentUuid="c1", message={"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": "A again"}]})]
    assert [e.uid for e in parse(b"".join(calls)).entries] == ["p", "c1", "r1", "r2"]


def test_after_a_rewind_the_system_prompt_is_the_one_the_branch_kept():
    # A tool was added (a new prompt_snapshot) on the branch the user then rewound: the window is back to the
    # earlier snapshot, so the added tool's snapshot, written again before the next call, is news again. It was
    # taken for a repeat of the last one read (on the abandoned branch) and skipped: the window kept the old tools.
    lines = (DATA / "claude_prompt_snapshot.jsonl").read_bytes().splitlines(keepends=True)
    first, added = json.loads(lines[0]), json.loads(lines[6])
    again = _record("user", uuid="again", parentUuid=first["uuid"], message={"role": "user", "content": "List the files again."})
    added_again = json.dumps({**added, "uuid": "added-again", "parentUuid": "again"}).encode() + b"\n"
    parser = parse(b"".join(lines[:7]) + again + added_again)
    snapshots = [e for e in parser.entries if e.role == SYSTEM_SNAPSHOT]
    assert [e.uid for e in parser.entries] == [first["uuid"], "again", "added-again"]
    assert [s.uid for s in snapshots] == [first["uuid"], "added-again"]
