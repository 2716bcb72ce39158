"""Every command on every kind of bad input: one line and exit 2, or counted diagnostics — never a traceback."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from ctxtop.tui.cli import main

from ..conftest import DATA

COMMANDS = (["export"], ["check"], ["preview"], ["export", "--format", "md"])
GOOD = (DATA / "claude_compact.jsonl").read_bytes()
BAD_FILES = {
    "empty": b"",
    "only_blank_lines": b"\n\n  \n",
    "nul_bytes": b"\x00" * 64 + b"\n",
    "invalid_utf8": b"\xff\xfe\xfd not text\n",
    "deep_nesting": b"[" * 10_000 + b"]" * 10_000 + b"\n",
    "unknown_json": b'{"hello": "world"}\n{"n": 1}\n',
    "huge_junk_line": b"x" * (50 << 20) + b"\n",
}
# Usable logs with damage inside: parsed, with the damage counted.
DAMAGED = {
    "invalid_utf8_line": GOOD + b'{"type":"user","message":{"role":"user","content":"\xff\xfe"}}\n',
    "wrong_field_types": GOOD + b'{"type":"assistant","message":{"role":"assistant","content":7,"usage":"lots"}}\n',
    "missing_fields": GOOD + b'{"type":"user"}\n{"type":"assistant","message":{}}\n',
    "torn_last_line": GOOD + b'{"type":"user","message":{"role":"us',
    "deep_line": GOOD + b"[" * 10_000 + b"\n",
    "nul_line": GOOD + b"\x00\x00\n",
    # A rewind to null named no message, yet matched the compression's entry (no id): it and all after were dropped, uncounted.
    "gemini_rewind_to_null": (DATA / "gemini_chat.jsonl").read_bytes() + b'{"$rewindTo": null}\n',
}


def _changed(name: str, change) -> bytes:
    """tests/data's ``name`` with ``change`` made to its decoded document: valid JSON, a field of a wrong type."""
    document = json.loads((DATA / name).read_text(encoding="utf-8"))
    change(document)
    return json.dumps(document).encode()


def _adk_part(document: dict, kind: str) -> dict:
    return next(part[kind] for event in document["events"] for part in (event.get("content") or {}).get("parts", []) if kind in part)


def _inspect_sample(document: dict) -> dict:
    return document["samples"][0]


def _openhands_metrics_model_is_an_object(document: list) -> None:
    """The first tool call's usage moved to ``llm_metrics`` (where an event without a model response has it), its model an object."""
    event = next(e for e in document if "model_response" in e.get("tool_call_metadata", {}))
    del event["tool_call_metadata"]["model_response"]
    event["llm_metrics"] = {"token_usages": [{"prompt_tokens": 1200, "completion_tokens": 30, "model": {"name": "x"}}]}


def _claude_subagent_file(**first) -> bytes:
    """claude_compact.jsonl as a sub-agent's own transcript (every message on side chain ``a1``), ``first`` changed in its first one."""
    lines = []
    for raw in GOOD.splitlines(keepends=True):
        try:
            record = json.loads(raw)
        except ValueError:
            lines.append(raw)  # its damaged lines stay as they are
            continue
        if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
            record.update(isSidechain=True, agentId="a1")
            if not any(b'"agentId"' in line for line in lines):
                record.update(first)
            raw = json.dumps(record).encode() + b"\n"
        lines.append(raw)
    return b"".join(lines)


# Valid JSON whose fields have types the formats do not use: read, the odd field taken for nothing (or as text).
WRONG_TYPES = {
    "claude_first_record_type_is_a_list": lambda: b'{"type": [], "sessionId": "x"}\n' + GOOD,
    "adk_tool_name_is_a_number": lambda: _changed("adk_session.json", lambda d: _adk_part(d, "functionCall").update(name=-1)),
    "adk_tool_id_is_a_number": lambda: _changed("adk_session.json", lambda d: _adk_part(d, "functionCall").update(id=-1)),
    "adk_result_name_is_a_number": lambda: _changed("adk_session.json", lambda d: _adk_part(d, "functionResponse").update(name=-1)),
    "inspect_tool_calls_is_a_number": lambda: _changed(
        "inspect_compaction.json", lambda d: next(m for m in _inspect_sample(d)["messages"] if "tool_calls" in m).update(tool_calls=-1)),
    "inspect_message_id_is_an_object": lambda: _changed(
        "inspect_compaction.json", lambda d: _inspect_sample(d)["messages"][0].update(id={"a": 1})),
    "inspect_event_metadata_is_text": lambda: _changed(
        "inspect_compaction.json", lambda d: next(e for e in _inspect_sample(d)["events"] if e["event"] == "compaction").update(metadata="x")),
    "openhands_metrics_model_is_an_object": lambda: _changed("openhands_condensation.json", _openhands_metrics_model_is_an_object),
    "openai_tool_calls_is_a_number": lambda: _changed(
        "openai_messages.json", lambda d: next(m for m in d if "tool_calls" in m).update(tool_calls=-1)),
}

# The first message of a sub-agent's own transcript decides whose chain the file is: a chain field of a wrong type there
# took it for the main chain's, and every later message of the sub-agent was put aside (10 messages read as 1 or 2).
SUBAGENT_FIRST_RECORD = {
    "agent_id_is_an_object": {"agentId": {"a": 1}},
    "agent_id_is_null": {"agentId": None},
    "agent_id_is_a_number": {"agentId": -1},
    "is_sidechain_is_text": {"isSidechain": "x"},
    "is_sidechain_is_an_object": {"isSidechain": {}},
}

# The same in a folder format: one file of tests/data/opencode_storage changed.
WRONG_TYPES_IN_FOLDERS = {
    "opencode_session_time_is_text": ("session/proj1/ses_a.json", lambda d: d.update(time="yesterday")),
    "opencode_session_updated_is_text": ("session/proj1/ses_a.json", lambda d: d["time"].update(updated="late")),
    "opencode_message_created_is_text": ("message/ses_b/msg_02.json", lambda d: d["time"].update(created="soon")),
    "opencode_message_id_is_an_object": ("message/ses_b/msg_02.json", lambda d: d.update(id={"a": 1})),
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_unusable_files_are_one_line_exit_2(tmp_path, capsys, command, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(BAD_FILES[name])
    code, _, err = run(capsys, *command, str(path))
    assert code == 2, err
    assert err.startswith("ctxtop: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damage_inside_a_usable_log_is_counted(tmp_path, capsys, command, name):
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(DAMAGED[name])
    code, out, err = run(capsys, *command, str(path))
    assert code in (0, 1), err  # check exits 1 for its findings
    assert "Traceback" not in err
    if command == ["export"]:
        diagnostics = json.loads(out)["source"]["diagnostics"]
        assert diagnostics["malformed_lines"] + diagnostics["unknown_records"] + diagnostics["torn_last_line"] >= 1


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_fields_of_unexpected_types_cost_the_field_not_the_log(tmp_path, capsys, command, name):
    suffix = ".jsonl" if name.startswith("claude") else ".json"
    path = tmp_path / f"{name}{suffix}"
    path.write_bytes(WRONG_TYPES[name]())
    code, out, err = run(capsys, *command, str(path))
    assert code in (0, 1), err  # read (check exits 1 for its findings), not refused nor an internal error
    if command == ["export"]:
        assert json.loads(out)["at"]["messages"] > 1


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("name", sorted(SUBAGENT_FIRST_RECORD))
def test_a_bad_chain_field_in_a_subagent_transcript_costs_its_record_only(tmp_path, capsys, command, name):
    good, bad = tmp_path / "agent-good.jsonl", tmp_path / "agent-bad.jsonl"
    good.write_bytes(_claude_subagent_file())
    bad.write_bytes(_claude_subagent_file(**SUBAGENT_FIRST_RECORD[name]))
    code, out, err = run(capsys, *command, str(bad))
    assert code in (0, 1), err
    if command == ["export"]:
        assert json.loads(out)["source"]["messages"] >= json.loads(run(capsys, "export", str(good))[1])["source"]["messages"] - 1


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("name", sorted(WRONG_TYPES_IN_FOLDERS))
def test_fields_of_unexpected_types_in_a_folder_cost_the_field_not_the_log(tmp_path, capsys, command, name):
    changed, change = WRONG_TYPES_IN_FOLDERS[name]
    folder = tmp_path / "opencode_storage"
    shutil.copytree(DATA / "opencode_storage", folder)
    (folder / changed).write_bytes(_changed(f"opencode_storage/{changed}", change))
    code, out, err = run(capsys, *command, str(folder))
    assert code in (0, 1), err
    if command == ["export"]:
        assert json.loads(out)["at"]["messages"] > 1


@pytest.mark.parametrize("change", [lambda d: d.update(samples=True), lambda d: d.update(_sample_files="x")],
                         ids=["samples is true", "a field no shape check knows"])
def test_a_document_with_nothing_readable_is_one_line_not_an_internal_error(tmp_path, capsys, change):
    path = tmp_path / "inspect.json"
    path.write_bytes(_changed("inspect_compaction.json", change))
    code, _, err = run(capsys, "export", str(path))
    assert code == 2 and err.startswith("ctxtop: error: ") and err.count("\n") == 1 and "internal error" not in err, err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_missing_directory_and_fifo_paths(tmp_path, capsys, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, message in ((tmp_path / "missing.jsonl", "no such file"), (tmp_path, "no session logs"), (fifo, "not a regular file")):
        code, _, err = run(capsys, *command, str(path))
        assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_permission_denied(tmp_path, capsys):
    path = tmp_path / "secret.jsonl"
    path.write_bytes(GOOD)
    path.chmod(0)
    code, _, err = run(capsys, "export", str(path))
    assert code == 2 and "permission denied" in err


def test_every_command_leaves_the_log_untouched(tmp_path, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes(GOOD)
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    for argv in (["export"], ["export", "--format", "md"], ["check"], ["check", "--json"], ["preview"], ["preview", "--json"],
                 ["export", "--strategies", "--redact"]):
        assert run(capsys, *argv, str(path))[0] in (0, 1)
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


@pytest.mark.parametrize("name", ["claude_compact.jsonl", "codex_local_compaction.jsonl", "gemini_chat.jsonl", "adk_session.json",
                                  "openai_messages.json", "inspect_compaction.json", "openhands_condensation.json",
                                  "anthropic_request.json"])
def test_a_utf8_byte_order_mark_costs_nothing(tmp_path, capsys, name):
    # What a Windows editor or PowerShell's Out-File puts first: a JSON document with it was "not a session log"
    # (the whole log refused), and the first line of JSON Lines was a malformed line (Codex's: a message lost).
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + (DATA / name).read_bytes())
    code, out, err = run(capsys, "export", str(path))
    assert code == 0, err
    plain = json.loads(run(capsys, "export", str(DATA / name))[1])
    with_bom = json.loads(out)
    assert with_bom["source"]["messages"] == plain["source"]["messages"]
    assert with_bom["source"]["diagnostics"] == plain["source"]["diagnostics"]
    assert with_bom["window"] == plain["window"]


@pytest.mark.parametrize("name", ["inspect_compaction.json", "openhands_condensation.json", "adk_session.json", "openai_messages.json"])
def test_a_json_document_cut_short_is_said_to_be_and_never_read_as_another_format(tmp_path, capsys, name):
    # Two thirds of an Inspect log was read as an OpenAI message dump (1 message, 13 malformed lines, exit 0); the
    # others were "not a session log ctxtop knows", which sends the user looking for the wrong cause.
    data = (DATA / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(data[: len(data) * 2 // 3])
    for command in COMMANDS:
        code, out, err = run(capsys, *command, str(path))
        assert (code, out) == (2, ""), err
        assert err == f"ctxtop: error: {path}: a JSON document that ends before it is complete (cut short, or still being written)\n"


@pytest.mark.parametrize("encode, said", [
    (lambda data: __import__("gzip").compress(data), "gzip-compressed: decompress it first (gunzip -k"),
    (lambda data: data.decode("utf-8").encode("utf-16"), "UTF-16 text: ctxtop reads UTF-8 (iconv -f UTF-16 -t UTF-8"),
    (lambda data: data.decode("utf-8").encode("utf-16-le"), "UTF-16 text: ctxtop reads UTF-8 (iconv -f UTF-16 -t UTF-8"),
], ids=["gzip", "utf-16 with its byte order mark", "utf-16-le without"])
def test_a_compressed_or_utf16_log_is_said_to_be(tmp_path, capsys, encode, said):
    # Both were "not a session log ctxtop knows": a log it knows, in a form it does not read, and no word of which.
    path = tmp_path / "session.jsonl"
    path.write_bytes(encode(GOOD))
    for command in COMMANDS:
        code, out, err = run(capsys, *command, str(path))
        assert (code, out) == (2, "") and err.startswith(f"ctxtop: error: {path}: {said}") and err.count("\n") == 1, err
