"""Which session to open: a file, the newest session in a directory, or the newest anywhere."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ctxtop.context.store.source import read_head, tree_names
from ctxtop.parsers.registry import detect, detect_tree
from ctxtop.tui.errors import UsageError

# The names a session file has: JSON Lines and JSON logs, Inspect AI's .eval and SWE-agent's .traj (`ctxtop formats`).
SESSION_SUFFIXES = (".jsonl", ".json", ".eval", ".traj")


def is_session_folder(path: Path) -> bool:
    """Whether a folder is itself one session (a Cline task, an OpenHands event directory)."""
    return detect_tree(tree_names(path)) is not None


def claude_config_dir(home: Path | None = None) -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR`` when set (it moves ~/.claude: a second account, say), else
    ``~/.claude``. Its sessions and its user settings are there, and nowhere else."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(moved).expanduser() if moved else (home or Path.home()) / ".claude"


def codex_home(home: Path | None = None) -> Path:
    """Codex's own folder: ``$CODEX_HOME`` when set, else ``~/.codex``."""
    moved = os.environ.get("CODEX_HOME")
    return Path(moved).expanduser() if moved else (home or Path.home()) / ".codex"


def agent_session_roots() -> list[Path]:
    return [claude_config_dir() / "projects", codex_home() / "sessions"]


# How far below the folder given a session is looked for: Codex keeps sessions/YYYY/MM/DD/rollout-*.jsonl
# (4 levels), Claude Code projects/<project>/<id>.jsonl (2). Deeper is not a sessions folder: `ctxtop
# export /` must answer, not walk the whole disk.
MAX_SEARCH_DEPTH = 6
MAX_SEARCHED_FILES = 200_000
# Claude Code keeps a session's sub-agents in <id>/subagents/ beside <id>.jsonl: the session opens with them.
SUBAGENT_FOLDER = "subagents"


def is_subagent_transcript(path: Path) -> bool:
    """A Claude Code sub-agent's transcript: in its session's ``subagents/`` (2.1.x), or ``agent-*.jsonl`` beside the
    session (2.0.x). It is part of its session (which opens with it), never a session of its own to open or switch to."""
    return path.parent.name == SUBAGENT_FOLDER or (path.name.startswith("agent-") and path.suffix == ".jsonl")


def newest_session(directory: Path) -> Path | None:
    """The most recently modified session-like file under ``directory`` (at most MAX_SEARCH_DEPTH folders
    down; sub-agent transcripts are their session's, not sessions of their own).

    A folder that cannot be listed or entered is skipped (os.walk's default), as is a file that
    cannot be looked at: one unreadable corner does not hide every other session. More than
    MAX_SEARCHED_FILES files is a UsageError: the folder is not a sessions folder. A file that is,
    read whole, no log ctxtop knows (a settings .json, a file of NUL bytes) is passed over for the
    next newest."""
    found: list[tuple[float, Path]] = []
    searched = 0
    top = len(directory.parts)
    for folder, folders, files in os.walk(directory):
        if len(Path(folder).parts) - top >= MAX_SEARCH_DEPTH:
            folders.clear()
        folders[:] = [name for name in folders if name != SUBAGENT_FOLDER]
        searched += len(files)
        if searched > MAX_SEARCHED_FILES:
            raise UsageError(f"{directory}: more than {MAX_SEARCHED_FILES:,} files to look through for the newest session; "
                             f"name the log, or the folder that holds it")
        for name in files:
            if not name.endswith(SESSION_SUFFIXES):
                continue
            path = Path(folder, name)
            try:
                info = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append((info.st_mtime, path))
    # Sub-agents' transcripts last: one is chosen only from a folder that holds nothing else (named, it is looked in).
    found.sort(key=lambda item: (is_subagent_transcript(item[1]), -item[0]))
    return next((path for _, path in found if may_be_session(path)), None)


# A file at most this big is read whole to tell whether it is a log ctxtop knows; a bigger one is
# taken as one (a JSON document's format may only show once it is read whole).
SNIFF_BYTES = 1 << 20


def may_be_session(path: Path) -> bool:
    """False only for a file read whole that is no log ctxtop knows; a log still being written (empty,
    half its first line) may well be one."""
    from ctxtop.tui.waiting import not_written_yet  # (waiting.py imports this module)

    try:
        if path.stat().st_size > SNIFF_BYTES or not_written_yet(path):
            return True
    except OSError:
        return False
    return head_is_a_log(path)


def head_is_a_log(path: str | os.PathLike) -> bool:
    """Whether the first ``SNIFF_BYTES`` of ``path`` are in a log format ctxtop reads (False: unreadable, or not)."""
    try:
        detect(read_head(path, SNIFF_BYTES))
    except (OSError, ValueError):  # (UnknownFormat is a ValueError)
        return False
    return True


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def resolve_session(path: str | None, *, waiting: bool = False) -> tuple[Path, str | None]:
    """The log to open and, when ctxtop chose it, a line saying which and why. ``waiting`` (the TUI,
    watch): a folder with no session yet is returned itself, to wait in; else that is a UsageError."""
    if path is not None:
        if _URL.match(path):  # (a Path would make "s3://b/x" the local "s3:/b/x", and the TUI wait for it for ever)
            raise UsageError(f"{path}: a URL; ctxtop opens local files (copy it here first; `ctxtop audit` reads URLs)")
        given = Path(path)
        if given.is_dir() and is_session_folder(given):
            return given, None
        if given.is_dir():
            found = newest_session(given)
            if found is None and waiting:
                return given, None
            if found is None:
                raise UsageError(f"{path}: no session logs ({', '.join('*' + s for s in SESSION_SUFFIXES)}) in this directory")
            return found, f"newest session in {path}: {found.name}"
        return given, None
    roots = [root for root in agent_session_roots() if root.is_dir()]
    candidates = [found for root in roots if (found := newest_session(root)) is not None]
    if not candidates:
        searched = " or ".join(str(r) for r in agent_session_roots())
        raise UsageError(f"no session given and none found under {searched}; pass a PATH, or try `ctxtop demo`")
    chosen = max(candidates, key=lambda p: p.stat().st_mtime)
    return chosen, f"newest session: {chosen}"
