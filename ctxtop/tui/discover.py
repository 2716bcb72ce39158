"""Which session to open: a file, the newest session in a directory, or the newest anywhere."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ctxtop.context.store.source import tree_names
from ctxtop.parsers.registry import detect_tree
from ctxtop.tui.errors import UsageError

SESSION_SUFFIXES = (".jsonl", ".json")


def is_session_folder(path: Path) -> bool:
    """Whether a folder is itself one session (a Cline task, an OpenHands event directory)."""
    return detect_tree(tree_names(path)) is not None


def agent_session_roots() -> list[Path]:
    home = Path.home()
    return [home / ".claude" / "projects", home / ".codex" / "sessions"]


def newest_session(directory: Path) -> Path | None:
    """The most recently modified session-like file under ``directory`` (recursively).

    A folder that cannot be listed or entered is skipped (os.walk's default), as is a file that
    cannot be looked at: one unreadable corner does not hide every other session."""
    newest: tuple[float, Path] | None = None
    for folder, _, files in os.walk(directory):
        for name in files:
            if not name.endswith(SESSION_SUFFIXES):
                continue
            path = Path(folder, name)
            try:
                info = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (newest is None or info.st_mtime > newest[0]):
                newest = (info.st_mtime, path)
    return newest[1] if newest else None


def resolve_session(path: str | None) -> tuple[Path, str | None]:
    """The log to open and, when ctxtop chose it, a line saying which and why."""
    if path is not None:
        given = Path(path)
        if given.is_dir() and is_session_folder(given):
            return given, None
        if given.is_dir():
            found = newest_session(given)
            if found is None:
                raise UsageError(f"{path}: no session logs (*.jsonl, *.json) in this directory")
            return found, f"newest session in {path}: {found.name}"
        return given, None
    roots = [root for root in agent_session_roots() if root.is_dir()]
    candidates = [found for root in roots if (found := newest_session(root)) is not None]
    if not candidates:
        searched = " or ".join(str(r) for r in agent_session_roots())
        raise UsageError(f"no session given and none found under {searched}; pass a PATH, or try `ctxtop demo`")
    chosen = max(candidates, key=lambda p: p.stat().st_mtime)
    return chosen, f"newest session: {chosen}"
