"""Every JSON ctxtop writes (export, check --json, preview --json, watch --json, the TUI's exports).

JSON escapes only C0 controls; a C1 control (U+009B is CSI, U+009D OSC) or a bidi override
written raw reaches the terminal of whoever prints the output. They are written as ``\\uXXXX``
escapes instead: the data is unchanged for a JSON reader, inert for a terminal.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ctxtop.context.sanitize import LONE_SURROGATE

# C1 controls and DEL; bidi marks, embeddings, overrides and isolates; line and paragraph separators
# (JavaScript's line terminators); zero-width and invisible formatting characters.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")


def json_document(value: Any, *, indent: bool = True) -> str:
    """``value`` as JSON text, one document ending with a newline (or one line when not ``indent``)."""
    option = orjson.OPT_INDENT_2 if indent else 0
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
