"""Pinned constraints from the command line and from a TOML pins file.

```toml
[[pin]]
id = "budget"                        # optional; default a slug of the text
text = "预算上限 8000 元，超过必须停下来问我"
facts = ["8000"]                     # optional; default derived from the text
forbid = ["send_email", "(?i)mail"]  # optional regexes matched against later tool calls
```
"""

from __future__ import annotations

import sys
from pathlib import Path

from ctxtop.context.rules.constraints import Constraint, make_constraint, unique_ids
from ctxtop.context.rules.forbid import ForbidError, forbid_pattern
from ctxtop.context.store.source import open_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


# Pins files are a few kilobytes; anything this big is not one (and is not read further).
MAX_PINS_BYTES = 4 << 20


class PinsError(ValueError):
    """A pins file that cannot be used; the message is one line."""


def _read_pins_file(path: str | Path) -> str:
    """The text of a pins file: a regular file (a FIFO would block, /dev/zero never end) of bounded size."""
    try:
        with open_file(path) as handle:
            data = handle.read(MAX_PINS_BYTES + 1)
    except FileNotFoundError:
        raise PinsError(f"{path}: no such pins file") from None
    except OSError as exc:
        raise PinsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_PINS_BYTES:
        raise PinsError(f"{path}: more than {MAX_PINS_BYTES >> 20} MB; not a pins file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PinsError(f"{path}: cannot be read ({exc})") from None


def load_pins(path: str | Path) -> list[Constraint]:
    try:
        data = tomllib.loads(_read_pins_file(path))
    except tomllib.TOMLDecodeError as exc:
        raise PinsError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise PinsError(f"{path}: not a pins file (nested too deeply)") from None
    pins = data.get("pin", [])
    if not isinstance(pins, list):
        raise PinsError(f"{path}: expected [[pin]] tables")
    constraints = []
    for number, pin in enumerate(pins, 1):
        if not isinstance(pin, dict) or not isinstance(pin.get("text"), str) or not pin["text"].strip():
            raise PinsError(f"{path}: pin {number} needs a text")
        facts, forbid = pin.get("facts"), pin.get("forbid", [])
        if facts is not None and not (isinstance(facts, list) and all(isinstance(f, str) for f in facts)):
            raise PinsError(f"{path}: pin {number}: facts must be a list of strings")
        if not (isinstance(forbid, list) and all(isinstance(f, str) for f in forbid)):
            raise PinsError(f"{path}: pin {number}: forbid must be a list of regexes")
        for pattern in forbid:
            try:
                forbid_pattern(pattern)
            except ForbidError as exc:
                raise PinsError(f"{path}: pin {number}: bad forbid regex {pattern!r} ({exc})") from None
        pin_id = pin.get("id") if isinstance(pin.get("id"), str) else None
        constraints.append(make_constraint(pin["text"], "pin", id=pin_id, facts=facts, forbid=forbid))
    return unique_ids(constraints)
