"""Bare message dumps: Anthropic requests and OpenAI chat messages in their shapes."""

import json

import pytest

from ctxtop.parsers import UnknownFormat, detect, parse
from ctxtop.parsers.model import (
    ASSISTANT,
    REASONING,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESULT,
    TOOLS,
    USER,
)

from ..conftest import DATA


def test_anthropic_request():
    parser = parse((DATA / "anthropic_request.json").read_bytes())
    assert parser.name == "anthropic-request"
    assert [[b.category for b in e.blocks] for e in parser.entries] == [[SYSTEM], [TOOLS], [USER], [REASONING, TOOL_CALL], [TOOL_RESULT]]
    assert parser.entries[4].blocks[0].text == "18C, cloudy"
    assert parser.meta.model == "claude-opus-4-1"


OPENAI = json.loads((DATA / "openai_messages.json").read_text())


@pytest.mark.parametrize(
    "data",
    [
        json.dumps(OPENAI).encode(),
        json.dumps({"model": "gpt-4o", "messages": OPENAI}).encode(),
        (DATA / "openai_messages.jsonl").read_bytes(),
    ],
    ids=["array", "object", "jsonl"],
)
def test_openai_shapes(data):
    parser = parse(data)
    assert parser.name == "openai-messages"
    assert [[b.category for b in e.blocks] for e in parser.entries] == [[SYSTEM], [USER], [TOOL_CALL], [TOOL_RESULT], [ASSISTANT]]
    assert parser.entries[2].blocks[0].tool_name == "ls"


@pytest.mark.parametrize("data", [b"hello world\n", b"[1, 2, 3]", b'{"a": 1}\n{"b": 2}\n', b"\x00\x01\x02"])
def test_unknown_content_is_refused_clearly(data):
    with pytest.raises(UnknownFormat, match="not a session log"):
        detect(data)
