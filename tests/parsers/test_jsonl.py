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


def test_lines_are_split_with_their_offsets_blank_ones_skipped():
    data = b'{"a":1}\n\n  \t\r\n \x0b\x0c\n  {"b":2}\r\n\x00\n{"c":'
    assert [(offset, number, bytes(line), complete) for offset, number, line, complete in jsonl.iter_lines(data, base=100)] == [
        (100, 1, b'{"a":1}', True),
        (118, 5, b'  {"b":2}\r', True),  # leading blanks do not make a line blank
        (129, 6, b"\x00", True),  # (a NUL is no blank: a malformed line to count)
        (131, 7, b'{"c":', False),  # no newline after it: perhaps still being written
    ]


def test_a_big_line_is_a_view_let_go_after_it_is_read(tmp_path, monkeypatch):
    import mmap

    monkeypatch.setattr(jsonl, "BIG_LINE_BYTES", 64)
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n{"big":"' + b"x" * 100 + b'"}\n')
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        lines = []
        for _, _, line, _ in jsonl.iter_lines(mapped):
            lines.append((type(line), loads(line)))
        mapped.close()  # (a view still held would refuse it: BufferError)
    assert lines == [(bytes, {"a": 1}), (memoryview, {"big": "x" * 100})]
