"""Messages workers post to the app: results of slow work, applied on the main thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from context.audit import Audit
from context.session import Session


@dataclass
class SessionLoaded(Message):
    """A session was parsed, counted and audited."""

    session: Session
    audit: Audit


@dataclass
class SnapshotReady(Message):
    """The breakdown at one message is computed."""

    snapshot: dict[str, Any]


@dataclass
class LoadFailed(Message):
    """The session could not be loaded; ``error`` is one line for the user."""

    error: str
