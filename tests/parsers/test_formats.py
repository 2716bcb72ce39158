"""The agent formats beyond Claude Code and Codex, each on a small fixture with its compaction marker.

For each: detection, message count, the true usage, the compaction mapped to the
common model, and the window before and after it.
"""

from __future__ import annotations

import json

import pytest

from ctxtop.context.audit.run import run_audit
from ctxtop.context.output.snapshot import build_snapshot
from ctxtop.context.rules.selection import RuleRequest, select_rules
from ctxtop.context.window.session import Session
from ctxtop.parsers.registry import PARSERS, detect

from ..conftest import DATA, SHARED_FIXTURES

PNG_DATA_URL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAyAAAAH0AAAAAAA="  # an 800 × 500 PNG's header

# file, format, messages, reported prompt at the end, (compaction message, kind, pre, post)
CASES = [
    ("adk_session.json", "adk", 9, 120, (7, "adk_compaction", 401, 120)),
    ("openhands_condensation.json", "openhands", 7, None, (6, "condensation", 1350, None)),
    ("gemini_chat.jsonl", "gemini-cli", 7, 900, (5, "gemini_compression", 5400, 900)),
    ("inspect_compaction.json", "inspect-ai", 5, 750, (3, "inspect_compaction", 10000, 700)),
    ("cline_task", "cline", 7, 430, (6, "cline_truncation", 1060, 430)),
    # Roo's condense_context row reports the window before and after it (contextCondense): the size until a call reports.
    ("roo_task", "cline", 5, 420, (4, "roo_condense", 1840, 420)),
    ("openhands_v1", "openhands-events", 6, None, (5, "condensation", None, None)),
]


@pytest.mark.parametrize("name, format, messages, reported, compaction", CASES, ids=[c[0] for c in CASES])
def test_format_fixture(name, format, messages, reported, compaction):
    session = Session.open(DATA / name)
    assert session.format == format
    assert session.message_count == messages
    assert session.reported_at(None) == reported
    snapshot = build_snapshot(session)
    found = [(c["message"], c["kind"], c["pre_tokens"], c["post_tokens"]) for c in snapshot["compactions"]]
    assert found == [compaction]


def categories(session, at):
    return {name: t.blocks for name, t in session.window_at(at).categories().items() if t.blocks}


def test_adk_compaction_replaces_its_time_range_with_the_summary():
    session = Session.open(DATA / "adk_session.json")
    assert categories(session, 6) == {"user": 2, "assistant": 2, "reasoning": 1, "tool_call": 1, "tool_result": 1}
    assert categories(session, 9) == {"summary": 1, "user": 1, "assistant": 1}
    constraints = select_rules(session.entries, RuleRequest(pins=("预算上限 8000 元，超过必须停下来问我",)))
    audit = run_audit(session, constraints)
    assert [(a.kind.key, a.message) for a in audit.alerts] == [("constraint_lost", 7)]


def test_adk_overlapping_windows_keep_both_summaries():
    import json

    document = json.loads((DATA / "adk_session.json").read_text())
    second = {"id": "e10", "invocationId": "compact-2", "author": "user", "timestamp": 8.5,
              "actions": {"compaction": {"startTimestamp": 6.0, "endTimestamp": 8.0,
                                         "compactedContent": {"role": "model", "parts": [{"text": "审批了 PO-0101。"}]}}}}
    document["events"].append(second)
    from ctxtop.parsers.adk import AdkSessionParser

    parser = AdkSessionParser()
    parser.parse(document)
    session = Session(parser)
    window = session.window_at(None)
    # [1-6] and [6-8] overlap at 6: neither is inside the other, so both summaries stay; e8 and e9 are covered.
    assert [b.category for b in window.blocks] == ["summary", "summary"]


@pytest.mark.parametrize("timestamp, shown", [
    (1765000000.25, "2025-12-06T05:46:40.250Z"),  # the epoch seconds ADK writes (time.time())
    (0, "1970-01-01T00:00:00.000Z"),
    (None, None),  # none: never one made up from the event's position ("3.0")
    ("2025-12-06T05:46:40Z", None),  # not ADK's
    (float("nan"), None),
    (1e300, None),  # past what a date can hold
])
def test_an_adk_event_s_time_is_given_as_every_format_gives_it(timestamp, shown):
    """The fleet's `started` and export's `at.timestamp` held "1765000000.25" for an ADK session, and "0.0" for one whose
    events carry no time (their positions): no query over `started` could place ADK sessions among the others."""
    from ctxtop.parsers.adk import AdkSessionParser

    event = {"id": "e1", "invocationId": "inv-1", "author": "user", "content": {"role": "user", "parts": [{"text": "hi"}]}}
    if timestamp is not None:
        event["timestamp"] = timestamp
    parser = AdkSessionParser()
    parser.parse({"appName": "app", "events": [event]})
    assert [entry.timestamp for entry in parser.entries] == [shown]


def test_openhands_condensation_forgets_a_range_and_keeps_the_rest():
    session = Session.open(DATA / "openhands_condensation.json")
    before, after = session.window_at(5), session.window_at(7)
    assert [b.entry.uid for b in before.blocks] == ["0", "1", "1", "2", "3", "3", "4"]
    assert [b.entry.uid for b in after.blocks] == ["6", "3", "3", "4", "7"]
    constraints = select_rules(session.entries, RuleRequest(pins=("Never push to main; open a pull request instead.",)))
    alerts = run_audit(session, constraints).alerts
    assert ("constraint_lost", 6) in [(a.kind.key, a.message) for a in alerts]


def test_an_openhands_call_and_its_result_count_under_the_function_called():
    # The action is execute_bash (tool_call_metadata.function_name), its observation of kind "run": one tool.
    session = Session.open(DATA / "openhands_condensation.json")
    tools = build_snapshot(session)["tool_usage"]["window"]["tools"]
    assert [(t["tool"], t["calls"], t["results"]) for t in tools] == [("execute_bash", 1, 1)]


def test_gemini_last_version_wins_notices_are_skipped_and_compression_rewrites_history():
    session = Session.open(DATA / "gemini_chat.jsonl")
    second = session.entries[1]
    assert [b.category for b in second.blocks] == ["assistant", "tool_call", "tool_result"]
    assert second.usage.prompt_tokens == 5200
    assert session.parser.diagnostics.skipped_records == 1  # the info notice never reaches the model
    assert categories(session, 7) == {"summary": 1, "assistant": 2, "user": 1}


def test_a_gemini_chat_holding_only_its_header_line_is_a_gemini_chat(tmp_path):
    # Gemini CLI writes its session's header line when it starts and its first message when the user sends one:
    # `ctxtop watch` started on a new session refused it ("not a session log ctxtop knows", exit 2).
    lines = (DATA / "gemini_chat.jsonl").read_bytes().splitlines(keepends=True)
    log = tmp_path / "session-1.jsonl"
    log.write_bytes(lines[0])
    assert detect(log.read_bytes()) == "gemini-cli"
    assert Session.open(log).message_count == 0
    legacy = tmp_path / "session-1.json"  # a legacy chat on one line has its messages: a document, not this
    legacy.write_text(json.dumps({**json.loads(lines[0]), "messages": []}) + "\n")
    assert detect(legacy.read_bytes()) == "gemini-cli-json"


def test_gemini_rewind_drops_the_messages_after_it(tmp_path):
    log = tmp_path / "chat.jsonl"
    lines = (DATA / "gemini_chat.jsonl").read_text().splitlines()[:7]
    log.write_text("\n".join(lines + ['{"$rewindTo":"m4"}']) + "\n")
    session = Session.open(log)
    assert [e.uid for e in session.entries] == ["m1", "m2"]


@pytest.mark.parametrize("part", [
    {"inline_data": {"mime_type": "image/png", "data": PNG_DATA_URL.split(",", 1)[1]}},
    {"inlineData": {"mimeType": "image/png", "data": PNG_DATA_URL.split(",", 1)[1]}},
], ids=["snake_case", "camelCase"])
def test_adk_an_image_part_is_an_image(part):
    # An image the user sent (inline_data) was dropped: only text and function parts were read.
    from ctxtop.parsers.adk import AdkSessionParser

    parser = AdkSessionParser()
    parser.parse({"appName": "a", "events": [{"id": "e1", "author": "user", "invocationId": "i1",
                                              "content": {"role": "user", "parts": [{"text": "what is this?"}, part]}}]})
    assert [(b.category, b.image_size) for b in parser.entries[0].blocks] == [("user", None), ("image", (800, 500))]


def test_gemini_images_the_user_attached_or_a_tool_read_are_images():
    # Gemini CLI keeps the Parts it sent: an @-attached image as inlineData beside the prompt's text, and
    # read_file's image as an inlineData part after its functionResponse. Both were dropped.
    from ctxtop.parsers.gemini import message_blocks

    image = {"inlineData": {"mimeType": "image/png", "data": PNG_DATA_URL.split(",", 1)[1]}}
    user = {"type": "user", "content": [{"text": "what is wrong here?"}, image]}
    answer = {"type": "gemini", "content": "", "toolCalls": [{"id": "r1", "name": "read_file", "args": {}, "result": [
        {"functionResponse": {"id": "r1", "name": "read_file", "response": {"output": "Binary content of type image/png was processed."}}},
        image]}]}
    assert [(b.category, b.image_size) for b in message_blocks(user)] == [("user", None), ("image", (800, 500))]
    assert [(b.category, b.tool_id, b.image_size) for b in message_blocks(answer)] == [
        ("tool_call", "r1", None), ("tool_result", "r1", None), ("image", "r1", (800, 500))]


GEMINI_REAL = SHARED_FIXTURES / "gemini-cli" / "agtrace_gemini_session.json"


@pytest.mark.skipif(not GEMINI_REAL.is_file(), reason=f"shared fixtures not found at {SHARED_FIXTURES}")
def test_gemini_thoughts_are_never_sent_again():
    # Gemini CLI's history leaves thought parts out (geminiChat recordHistory): every earlier call's thoughts were
    # counted in the window, 512 of the 6,686 tokens the last call reports (its system + tools inferred 462 short).
    session = Session.open(GEMINI_REAL)
    for message in range(1, session.message_count + 1):
        window = session.window_at(message)
        assert {item.entry.index for item in window.blocks if item.category == "reasoning"} <= {message}
    assert build_snapshot(session)["window"]["categories"]["reasoning"]["tokens"] == 50  # the last call's own


def test_inspect_summary_marks_the_compaction_and_keeps_the_final_messages():
    session = Session.open(DATA / "inspect_compaction.json")
    window = session.window_at(None)
    assert [b.category for b in window.blocks] == ["system", "summary", "user", "assistant", "tool_call", "tool_result"]


def test_formats_lists_every_parser(capsys):
    from ctxtop.tui.cli import main

    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    for name in PARSERS:
        assert name in out
    # The README's way to open another sample than the first, which `formats` did not tell.
    assert "its first sample, or the N-th as LOG#N" in out


def test_cline_truncation_drops_the_deleted_range_from_what_is_sent():
    session = Session.open(DATA / "cline_task")
    before, after = session.window_at(5), session.window_at(7)
    assert [b.entry.uid for b in before.blocks] == ["0", "1", "1", "2", "3", "3", "4"]
    assert [b.entry.uid for b in after.blocks] == ["0", "3", "3", "4", "5"]
    # Usage per request from ui_messages.json: tokensIn + cacheReads + cacheWrites.
    assert [e.usage.prompt_tokens for e in session.entries if e.usage] == [1000, 1060, 430]


def test_roo_condense_hides_the_condensed_messages_behind_the_summary():
    session = Session.open(DATA / "roo_task")
    constraints = select_rules(session.entries, RuleRequest(pins=("Never email customers; WeCom only.",)))
    alerts = run_audit(session, constraints).alerts
    assert ("constraint_lost", 4) in [(a.kind.key, a.message) for a in alerts]
    assert [b.category for b in session.window_at(None).blocks] == ["summary", "assistant"]


def test_roo_condense_sizes_of_a_row_without_its_condense_id_come_in_order(tmp_path):
    # Older Roo Code writes contextCondense without condenseId: the n-th condense_context row is the n-th summary's.
    import shutil

    task = shutil.copytree(DATA / "roo_task", tmp_path / "task")
    ui = json.loads((task / "ui_messages.json").read_text())
    del ui[1]["contextCondense"]["condenseId"]
    (task / "ui_messages.json").write_text(json.dumps(ui))
    compaction = next(e.compaction for e in Session.open(task).entries if e.compaction)
    assert (compaction.pre_tokens, compaction.post_tokens) == (1840, 420)


def test_openhands_v0_event_directory_reads_like_its_trajectory(tmp_path):
    import json

    events = json.loads((DATA / "openhands_condensation.json").read_text())
    (tmp_path / "events").mkdir()
    for event in events:
        (tmp_path / "events" / f"{event['id']}.json").write_text(json.dumps(event))
    (tmp_path / "metadata.json").write_text("{}")
    folder, trajectory = Session.open(tmp_path), Session.open(DATA / "openhands_condensation.json")
    assert folder.format == "openhands-events"
    assert [(e.uid, [b.category for b in e.blocks]) for e in folder.entries] == [
        (e.uid, [b.category for b in e.blocks]) for e in trajectory.entries]


def test_a_session_folder_is_followed_as_it_changes(tmp_path):
    import shutil

    from ctxtop.context.window.follow import LogFollower

    task = tmp_path / "task"
    shutil.copytree(DATA / "cline_task", task)
    follower = LogFollower(task)
    assert follower.poll() is None
    history = json.loads((task / "api_conversation_history.json").read_text())
    history.append({"role": "user", "ts": 1767607220000, "content": "Keep E100 working!"})
    (task / "api_conversation_history.json").write_text(json.dumps(history))
    update = follower.poll()
    assert update is not None and update.new == 1 and update.messages == 8


def test_opencode_storage_shows_the_newest_session_with_its_compaction_and_pruning():
    session = Session.open(DATA / "opencode_storage")
    assert session.format == "opencode" and session.parser.meta.session_id == "ses_b"
    second = session.entries[1]
    assert [b.category for b in second.blocks] == ["reasoning", "tool_call", "tool_result", "assistant"]
    assert second.blocks[2].text == "[Old tool result content cleared]"  # pruned: the model sees a placeholder
    assert second.usage.prompt_tokens == 1250
    snapshot = build_snapshot(session)
    assert [(c["message"], c["kind"], c["trigger"]) for c in snapshot["compactions"]] == [(3, "opencode_compaction", "auto")]
    assert categories(session, 6) == {"summary": 1, "user": 1, "assistant": 1}


def opencode_tree(parts: list[dict]) -> dict[str, bytes]:
    """An opencode storage tree: one session whose one user message holds ``parts``."""
    records = {"session/p/ses_1.json": {"id": "ses_1", "time": {"updated": 1}},
               "message/ses_1/msg_1.json": {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1}}}
    for number, part in enumerate(parts, 1):
        records[f"part/msg_1/prt_{number}.json"] = {"id": f"prt_{number}", "messageID": "msg_1", **part}
    return {name: json.dumps(record).encode() for name, record in records.items()}


SHOT = {"type": "file", "mime": "image/png", "filename": "shot.png", "url": PNG_DATA_URL}
READ_TOOL = {"type": "tool", "tool": "read", "callID": "c1",
             "state": {"status": "completed", "input": {}, "output": "Image read", "attachments": [SHOT]}}


# What the model is sent for each file part (opencode's toModelMessage): a pasted image or one a tool read
# was counted as its file name, and a text file or folder (read into synthetic text parts) once more;
# a text part marked ignored is never sent.
@pytest.mark.parametrize("parts, blocks", [
    ([SHOT], [("image", "", (800, 500))]),
    ([{"type": "text", "text": "see this", "synthetic": True}, {**SHOT, "mime": "text/plain", "filename": "a.py"}],
     [("injected", "see this", None)]),
    ([{"type": "file", "mime": "application/x-directory", "filename": "src/", "url": "file:///src"}], []),
    ([{"type": "file", "mime": "application/pdf", "filename": "spec.pdf", "url": "file:///spec.pdf"}], [("injected", "spec.pdf", None)]),
    ([READ_TOOL], [("tool_call", "{}", None), ("tool_result", "Image read", None), ("image", "", (800, 500))]),
    ([{"type": "text", "text": "typed"}, {"type": "text", "text": "shown, never sent", "ignored": True}], [("user", "typed", None)]),
], ids=["pasted image", "text file", "folder", "pdf", "image a tool read", "ignored text"])
def test_opencode_file_parts_are_counted_as_the_model_gets_them(parts, blocks):
    from ctxtop.parsers.opencode import OpencodeParser

    parser = OpencodeParser()
    parser.parse_tree(opencode_tree(parts))
    got = [(b.category, b.text, b.image_size) for e in parser.entries for b in e.blocks]
    assert got == blocks


def opencode_database(database, *, wal: bool = False):
    """opencode.db built from the storage fixture's records; left open (and returned) in WAL mode."""
    import sqlite3

    connection = sqlite3.connect(database)
    if wal:
        connection.execute("pragma journal_mode=wal")
        connection.execute("pragma wal_autocheckpoint=0")  # what is written stays in the -wal
    connection.executescript(
        "create table session (id text, project_id text, title text, time_created int, time_updated int);"
        "create table message (id text, session_id text, time_created int, data text);"
        "create table part (id text, message_id text, session_id text, time_created int, data text);"
    )
    storage = DATA / "opencode_storage"
    for path in sorted(storage.rglob("*.json")):
        record = json.loads(path.read_text())
        kind = path.relative_to(storage).parts[0]
        if kind == "session":
            connection.execute("insert into session values (?,?,?,?,?)", (record["id"], record["projectID"], record["title"],
                                                                        record["time"]["created"], record["time"]["updated"]))
        elif kind == "message":
            data = {k: v for k, v in record.items() if k not in ("id", "sessionID")}
            connection.execute("insert into message values (?,?,?,?)", (record["id"], record["sessionID"], record["time"]["created"], json.dumps(data)))
        else:
            data = {k: v for k, v in record.items() if k not in ("id", "messageID")}
            connection.execute("insert into part values (?,?,?,?,?)", (record["id"], record["messageID"], record["sessionID"], 0, json.dumps(data)))
    connection.commit()
    if wal:
        return connection
    connection.close()
    return None


def entries_of(session):
    return [(e.uid, [(b.category, b.text) for b in e.blocks]) for e in session.entries]


def beside(database) -> tuple:
    """The database's folder as it is: every name, and each file's bytes and mtime."""
    import os

    return tuple((name, (database.parent / name).read_bytes(), os.stat(database.parent / name).st_mtime_ns)
                 for name in sorted(os.listdir(database.parent)))


def test_opencode_database_reads_like_its_storage_folder_and_is_never_written(tmp_path):
    database = tmp_path / "opencode.db"
    opencode_database(database)
    before = beside(database)
    from_db, from_folder = Session.open(database), Session.open(DATA / "opencode_storage")
    assert entries_of(from_db) == entries_of(from_folder)
    assert beside(database) == before


def test_a_wal_database_closed_by_its_writer_gets_no_wal_or_shm_beside_it(tmp_path):
    # Issue 18, item 25: opened `mode=ro`, a WAL-mode database got -wal and -shm files created beside it.
    database = tmp_path / "opencode.db"
    opencode_database(database, wal=True).close()  # the last connection checkpoints and removes the -wal
    assert [p.name for p in tmp_path.iterdir()] == ["opencode.db"]
    before = beside(database)
    assert entries_of(Session.open(database)) == entries_of(Session.open(DATA / "opencode_storage"))
    assert beside(database) == before


def test_a_live_wal_database_is_read_with_its_uncheckpointed_writes_and_nothing_beside_it_changes(tmp_path):
    database = tmp_path / "opencode.db"
    writer = opencode_database(database, wal=True)  # still open: everything is in the -wal
    try:
        assert (tmp_path / "opencode.db-wal").stat().st_size > 0
        before = beside(database)
        assert entries_of(Session.open(database)) == entries_of(Session.open(DATA / "opencode_storage"))
        assert beside(database) == before  # the -wal and the -shm too: a reader writes read marks there
    finally:
        writer.close()


def test_one_sample_of_a_many_sample_log_is_picked_with_a_hash_suffix(tmp_path, capsys):
    from ctxtop.tui.cli import main

    document = json.loads((DATA / "inspect_compaction.json").read_text())
    second = json.loads(json.dumps(document["samples"][0]))
    second["id"] = 2
    second["messages"] = second["messages"][:2]
    document["samples"].append(second)
    log = tmp_path / "two.json"
    log.write_text(json.dumps(document))
    assert Session.open(log).message_count == 5
    picked = Session.open(f"{log}#2")
    assert picked.message_count == 2 and picked.parser.meta.session_id == "2"
    assert main(["export", f"{log}#3"]) == 2
    assert "no sample 3: the log has 2" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["claude_compact.jsonl", "openai_messages.json", "cline_task"])
def test_a_sample_of_a_log_that_holds_one_session_is_refused(tmp_path, capsys, name):
    # "LOG#2" of a log with no samples was its one session, with no word that the number meant nothing.
    from ctxtop.tui.cli import main

    assert (DATA / name).exists()
    assert main(["export", f"{DATA / name}#1"]) == 0
    capsys.readouterr()
    assert main(["export", f"{DATA / name}#2"]) == 2
    err = capsys.readouterr().err
    assert "no sample 2" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("head", [b"\x00" * 64, b"just some text\n" * 4, b"\x89PNG\r\n\x1a\n" + bytes(range(256))],
                         ids=["zeros (a file a crash left)", "lines of text", "binary"])
def test_a_big_file_that_opens_no_json_document_is_refused_without_decoding_it_whole(monkeypatch, head):
    # Every format read as one document opens with "{" or "[". Detection decoded any file whose head named no format as
    # one JSON document: 2 GB of zeros took 20 s and 6 GB of memory to refuse, at each hook call on such a transcript.
    from ctxtop.parsers import registry
    from ctxtop.parsers.registry import UnknownFormat

    data = head + b"\x00" * (8 << 20)
    decoded = []
    real_loads = registry.loads
    monkeypatch.setattr(registry, "loads", lambda raw: decoded.append(len(raw)) or real_loads(raw))
    with pytest.raises(UnknownFormat, match="not a session log"):
        detect(data)
    assert len(data) not in decoded  # (a line of it may be decoded, as any log's first lines are)
