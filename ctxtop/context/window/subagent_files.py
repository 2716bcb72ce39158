"""Where a Claude Code session's sub-agent transcripts are looked for: ``<session>/subagents/agent-*.jsonl``, and
a workflow's one folder deeper, ``<session>/subagents/<folder>/agent-*.jsonl``.

Looked for there only. A ``subagents`` that is a link out of the session's folder is not followed (one linked to
``/`` walked the whole disk, and read every other session's sub-agents as this one's), nor is any folder linked
inside it (a link to ``..`` loops); and no more than MAX_ENTRIES entries are looked at in all. What was left
unread is said (``skipped``), never raised.
"""

from __future__ import annotations

import os
from pathlib import Path

SUBAGENT_FOLDER = "subagents"
# Entries (transcripts, .meta.json files, folders) looked at in all: a session has tens of sub-agents, hundreds at
# most; a folder holding more is not one Claude Code wrote, and listing it is no work a status line should wait on.
MAX_ENTRIES = 20_000


def nested_transcripts(log: Path) -> tuple[list[Path], str | None]:
    """The ``agent-*.jsonl`` entries of the session ``log``'s subagents folder and of the folders directly in it,
    sorted (not checked to be files: their reader does that); and what was not looked at and why (None: nothing)."""
    folder = log.with_suffix("") / SUBAGENT_FOLDER
    try:
        if not folder.is_dir():
            return [], None
    except OSError:
        return [], None
    if not in_session_folder(log):
        return [], f"{folder} is a link to a folder outside the session's folder: not read"
    found: list[Path] = []
    looked = 0
    pending = [(folder, 0)]  # (a folder, its depth below subagents/)
    while pending:
        current, depth = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    looked += 1
                    if looked > MAX_ENTRIES:
                        return sorted(found), f"{folder}: only its first {MAX_ENTRIES:,} entries looked at for sub-agents"
                    if entry.name.startswith("agent-") and entry.name.endswith(".jsonl"):
                        found.append(Path(entry.path))
                    elif depth == 0 and _is_real_folder(entry):
                        pending.append((Path(entry.path), 1))
        except OSError:
            continue  # a folder that cannot be listed holds nothing readable
    return sorted(found), None


def in_session_folder(log: Path) -> bool:
    """Whether the session ``log``'s subagents folder is in the session's folder, links followed (False when it
    cannot be told: gone, unreadable, a link loop)."""
    session_folder = log.with_suffix("")
    try:
        return (session_folder / SUBAGENT_FOLDER).resolve(strict=True).is_relative_to(session_folder.resolve(strict=True))
    except (OSError, RuntimeError):  # (a link loop is a RuntimeError before Python 3.13)
        return False


def _is_real_folder(entry: os.DirEntry[str]) -> bool:
    """A folder, not a link to one."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
