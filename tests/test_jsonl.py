"""Line decoding: big lines take the stdlib's decoder and must decode exactly as orjson does."""

from __future__ import annotations

import json

import pytest

from ctxtop.parsers import jsonl
from ctxtop.parsers.jsonl import DecodeError, loads

RECORD = {"type": "user", "message": {"content": [{"type": "tool_result", "content": "输出 line\n" * 50, "n": 2**70}]}, "ok": True,
          "x": -1.5e-7, "s": "\u2028\ud7ff\U0001f600"}


@pytest.mark.parametrize("big_line_bytes", [1 << 20, 0], ids=["orjson", "stdlib"])
def test_both_decoders_agree(monkeypatch, big_line_bytes):
    monkeypatch.setattr(jsonl, "BIG_LINE_BYTES", big_line_bytes)
    assert loads(json.dumps(RECORD, ensure_ascii=False).encode()) == RECORD
    for bad in (b'{"a": NaN}', b'{"a": Infinity}', b'{"a": 1', "{\"a\": \"\xff\"}".encode("latin-1"), b"[" * 100_000):
        with pytest.raises(DecodeError):
            loads(bad)


def test_a_line_past_the_threshold_uses_the_lean_decoder(monkeypatch):
    calls = []
    monkeypatch.setattr(jsonl, "_stdlib_loads", lambda data, why: calls.append(len(data)) or {})
    loads(b'{"a": "' + b"x" * (jsonl.BIG_LINE_BYTES + 1) + b'"}')
    loads(b'{"a": 1}')
    assert calls == [jsonl.BIG_LINE_BYTES + 10]  # the big line only
