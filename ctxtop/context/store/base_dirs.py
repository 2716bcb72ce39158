"""Where ctxtop keeps its own files: the XDG base directories, read as the XDG Base Directory spec says."""

from __future__ import annotations

import os
from pathlib import Path


def xdg_base(variable: str, *under_home: str) -> Path:
    """``$variable`` when it holds an absolute path, else ``~/<under_home…>``.

    The spec calls a relative value invalid, to be ignored: taken as it is, ``XDG_CACHE_HOME=cache``
    would put ctxtop's caches in the current folder, which is often the log's (ctxtop never writes
    beside a log), or in an agent's project when a hook runs there."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else Path.home().joinpath(*under_home)
