"""The unit of work an engine runs: one session, named by a local path or a URL, audited headless.

Plain data in, plain data out, importable by name: a process pool and a Dask worker pickle
``audit_task`` and its ``Task`` alike.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

from ctxtop.context.fleet.session import AuditSettings, SessionAudit, audit_session, skip_reason


@dataclass(frozen=True, slots=True)
class Task:
    name: str  # the path or URL the rows carry
    digest: str | None
    settings: AuditSettings
    url: bool = False
    storage_options: dict[str, Any] = field(default_factory=dict)


# A store that did not give an object (throttled, timed out, a sub-agent object gone between the listing and the fetch):
# no result of the object's content, so none kept for the next run to reuse under its fingerprint.
FETCH_FAILED = "cannot fetch it"


def audit_task(task: Task) -> SessionAudit:
    if not task.url:
        return audit_session(task.name, task.settings, content_digest=task.digest)
    from ctxtop.tui.commands.fleet.storage import fetch

    with tempfile.TemporaryDirectory(prefix="ctxtop-audit-") as folder:
        try:
            local = fetch(task.name, task.storage_options, folder)
        except Exception as exc:  # noqa: BLE001 - an object that cannot be fetched is one skipped session
            return SessionAudit(task.name, skipped=skip_reason(f"{FETCH_FAILED}: {type(exc).__name__}: {exc}"))
        return audit_session(local, task.settings, shown_path=task.name, content_digest=task.digest)
