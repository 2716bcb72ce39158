"""Pins made in the TUI, kept per session outside the log so they are used next time.

Each session's pins are a TOML file named after a digest of the log's resolved
path, under ``$CTXTOP_STATE_DIR``, else ``$XDG_STATE_HOME/ctxtop/pins``, else
``~/.local/state/ctxtop/pins``. ctxtop never writes beside the log itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ctxtop.context.rules.pins import PinsError, load_pins, tomllib
from ctxtop.context.store.base_dirs import xdg_base


def state_dir() -> Path:
    if os.environ.get("CTXTOP_STATE_DIR"):
        return Path(os.environ["CTXTOP_STATE_DIR"])
    return xdg_base("XDG_STATE_HOME", ".local", "state") / "ctxtop" / "pins"


def pins_path(log_path: str | os.PathLike) -> Path:
    resolved = str(Path(log_path).resolve())
    digest = hashlib.blake2b(resolved.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return state_dir() / f"{Path(resolved).stem[:40]}-{digest}.toml"


@dataclass(slots=True)
class SavedPins:
    """What the user decided in the TUI for one session: rules pinned, and auto-detected rules hidden (by id)."""

    texts: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)


def load_session_pins(log_path: str | os.PathLike) -> tuple[SavedPins, str | None]:
    """The pins saved for this log, and a warning when the file is there but unusable (it is then ignored,
    and rewritten at the next pin)."""
    path = pins_path(log_path)
    if not path.is_file():
        return SavedPins(), None
    try:
        texts = [c.text for c in load_pins(path)]
        hidden = tomllib.loads(path.read_text(encoding="utf-8")).get("hidden", [])
    except PinsError as exc:
        return SavedPins(), f"saved pins ignored: {exc}"
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        return SavedPins(), f"saved pins ignored: {exc}"
    if not (isinstance(hidden, list) and all(isinstance(h, str) for h in hidden)):
        return SavedPins(texts), "saved pins: 'hidden' is not a list of rule ids; ignored"
    return SavedPins(texts, hidden), None


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string that reads back as ``text``.

    JSON's escapes are TOML's, but JSON leaves DEL raw, which TOML forbids (a pin holding one made
    the whole file unreadable, and every pin of the session was dropped), and a lone surrogate has
    no UTF-8 form (it becomes U+FFFD)."""
    text = re.sub("[\ud800-\udfff]", "\ufffd", text)
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def save_session_pins(log_path: str | os.PathLike, saved: SavedPins) -> Path:
    """Write the session's pins atomically; returns where they went."""
    path = pins_path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"[[pin]]\ntext = {toml_string(text)}\n\n" for text in saved.texts)
    header = f"# ctxtop pins for {toml_string(str(Path(log_path).resolve()))}\n\n"
    if saved.hidden:
        header += f"hidden = [{', '.join(toml_string(h) for h in saved.hidden)}]\n\n"
    # A private temporary file, then an atomic rename: two ctxtop processes saving at once
    # leave one whole file, never a mix.
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(header + body)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return path
