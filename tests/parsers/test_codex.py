"""Codex rollouts: items, token_count dedupe, local and remote compaction."""

import base64
import json
import struct

import pytest

from ctxtop.parsers import parse
from ctxtop.parsers.model import (
    ASSISTANT,
    IMAGE,
    INJECTED,
    REASONING,
    SUMMARY,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
)

from ..conftest import DATA


@pytest.fixture(scope="module")
def local():
    return parse((DATA / "codex_local_compaction.jsonl").read_bytes())


def test_items_become_entries(local):
    categories = [[b.category for b in e.blocks] for e in local.entries[:8]]
    assert categories == [[SYSTEM], [INJECTED], [INJECTED], [USER], [REASONING], [TOOL_CALL], [TOOL_RESULT], [ASSISTANT]]
    assert local.meta.model == "gpt-5.1-codex-max"
    assert local.meta.context_window == 258400
    assert local.diagnostics.unknown_records == 0


def test_token_count_attaches_to_the_call_and_dedupes(local):
    call = local.entries[5]  # the function_call that ended the first model call
    assert call.usage.prompt_tokens == 1200 and call.usage.reasoning_tokens == 40
    assert local.entries[7].usage.prompt_tokens == 1300


def test_local_compaction_carries_its_replacement(local):
    marker = local.entries[8]
    assert marker.compaction.kind == "codex_local" and not marker.compaction.opaque
    assert marker.compaction.trigger is None  # a rollout does not say if /compact or the limit asked: not "auto"
    assert [b.category for b in marker.compaction.replacement] == [INJECTED, USER, SUMMARY]
    # context_compacted after compacted is the same event, not a second compaction
    assert sum(1 for e in local.entries if e.compaction) == 1
    # the zeroed token_count around compaction is ignored
    assert local.entries[9].usage.prompt_tokens == 400


def test_remote_compaction_is_opaque():
    remote = parse((DATA / "codex_remote_compaction.jsonl").read_bytes())
    marker = next(e for e in remote.entries if e.compaction)
    assert marker.compaction.kind == "codex_remote" and marker.compaction.opaque
    assert [b.category for b in marker.compaction.replacement] == [USER, SUMMARY]


def test_context_compacted_alone_marks_a_compaction():
    data = (b'{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}\n'
            b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}\n'
            b'{"timestamp":"t","type":"event_msg","payload":{"type":"context_compacted"}}\n')
    parser = parse(data)
    assert parser.entries[-1].compaction.kind == "codex_local"


def _png_data_url(width: int, height: int) -> str:
    """A data URL whose PNG header says ``width`` × ``height`` (all an image's size is read from)."""
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height) + bytes(5)
    return "data:image/png;base64," + base64.b64encode(header).decode()


def test_an_image_in_a_tool_output_is_an_image_of_its_call():
    # Newer rollouts write a function_call_output as content items (FunctionCallOutputContentItem): view_image's
    # screenshot came as an input_image the model sees, and was dropped.
    output = [{"type": "input_text", "text": "shot.png"}, {"type": "input_image", "image_url": _png_data_url(1000, 500)}]
    records = [{"type": "session_meta", "payload": {"id": "x"}},
               {"type": "response_item", "payload": {"type": "function_call", "name": "view_image", "arguments": "{}", "call_id": "c1"}},
               {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": output}}]
    result = parse("".join(json.dumps(r) + "\n" for r in records).encode())
    blocks = result.entries[-1].blocks
    assert [(b.category, b.text, b.tool_id) for b in blocks] == [(TOOL_RESULT, "shot.png", "c1"), (IMAGE, "", "c1")]
    assert blocks[1].image_size == (1000, 500)


def _rollout(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in ({"type": "session_meta", "payload": {"id": "x"}}, *records)).encode()


def _said(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "response_item", "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}}


def test_a_rollback_takes_the_last_user_turns_out_of_the_history():
    # Codex's backtrack (Esc Esc, edit an earlier message) writes thread_rolled_back: the last num_turns user turns
    # leave the history the model is sent. They stayed in ctxtop's window, counted beside the turn that replaced them.
    result = parse(_rollout(
        _said("user", "<environment_context>cwd</environment_context>"), _said("user", "first"), _said("assistant", "one"),
        _said("user", "second"), _said("assistant", "two"), _said("user", "third"), _said("assistant", "three"),
        {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 2}},
        _said("user", "second, said better"), _said("assistant", "two again")))
    assert [e.blocks[0].text for e in result.entries] == [
        "<environment_context>cwd</environment_context>", "first", "one", "second, said better", "two again"]
