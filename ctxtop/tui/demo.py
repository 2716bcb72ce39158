"""The bundled demo session and the settings it is meant to be seen with."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

# The demo agent runs with a small window so that its three compactions happen
# within a few hundred short messages, as in seed 000's experiment.
DEMO_WINDOW = 8000


def demo_path() -> Path:
    return Path(str(resources.files("ctxtop.tui") / "data" / "demo_session.jsonl"))
