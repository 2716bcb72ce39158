"""Every JSON ctxtop writes (export, check --json, preview --json, watch --json, the TUI's exports).

JSON would carry a log's escape sequences, C1 controls and bidi overrides as data (escaped or raw),
and whoever prints a field (``jq -r``) would send them to a terminal: every string is cleaned as
every other output's text is (``clean_json``), keys included. What JSON leaves raw and a terminal or
a JavaScript reader could still take for a control (U+2028, U+2029) is written as a ``\\uXXXX`` escape.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ctxtop.context.sanitize import LONE_SURROGATE, clean_json

# Line and paragraph separators (JavaScript's line terminators), which cleaning keeps; and, should any be
# left, C1 controls, DEL, bidi marks and invisible formatting characters.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")


def json_document(value: Any, *, indent: bool = True) -> str:
    """``value`` as JSON text, one document ending with a newline (or one line when not ``indent``)."""
    option = orjson.OPT_INDENT_2 if indent else 0
    value = clean_json(value)
    try:
        raw = orjson.dumps(value, option=option)
    except TypeError:  # a lone surrogate or an integer beyond 64 bits got this far: made safe, then written
        raw = orjson.dumps(_writable(value), option=option)
    return _UNSAFE.sub(_escape, raw.decode("utf-8")) + "\n"


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _writable(value: Any) -> Any:
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if -(1 << 63) <= value < (1 << 64) else str(value)
    if isinstance(value, (list, tuple)):
        return [_writable(v) for v in value]
    if isinstance(value, dict):
        return {_writable(str(k)): _writable(v) for k, v in value.items()}
    return _writable(str(value))
