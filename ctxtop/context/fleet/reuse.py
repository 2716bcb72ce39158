"""What a second run may take from the first: results kept under the session's content digest.

A session's rows depend only on its bytes and on how it is audited (the pins file's content,
the encoding, the window, a forced format, ctxtop's version), so they are kept in ctxtop's
persistent cache (beside the token counts and compaction audits) under a digest of exactly
that. A log that did not change is not read again beyond hashing it; one that did is audited
anew — and its unchanged compactions still come from the audit cache.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from ctxtop.context.fleet.session import AuditSettings, SessionAudit
from ctxtop.context.store.session_index import new_digest
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.version import version

# Bump when what a row holds changes: older results are then audited again.
FLEET_VERSION = 17  # 2: Codex cache reads after a compaction; cost_estimated of an unpriced summarizing call. 3: XXH3 digests;
# 4: rule detection leaves Claude Code's summarizing request out, alert details quote cleaned rules; 5: rules in tables and
# fewer in descriptive sections, Claude Code messages sent from the queue within a turn, every Inspect call's usage;
# 6: only a cap on money caps a call's amounts, the summary's tokens counted exactly whatever the token cache held;
# 7: a summary's slashed names looked for part by part, its claims without their elaboration; 8: a path held by its
# project-relative form; 9: a number's unit ends with its word;
# 10: a turn's opening call that reports more is no baseline for an implicit compaction, Gemini's cache reads;
# 11: file names spelled out as bash's $'…' does, not cleaned (two names cleaned alike were one);
# 12: a rule's id and facts from its text as shown; 13: amounts in strings, and in inputs JSON cannot decode whole;
# 14: a path's tail held only as a path of its own; 15: money caps read from amounts written as money;
# 16: caps over/above, counted things, amounts' objects and lists; 17: example blocks and recommended workflows
READ_BYTES = 8 << 20


def content_digest(path: str | os.PathLike) -> str:
    """A digest of the log's bytes; for a session folder (Cline, OpenHands events, opencode storage),
    of every file's relative name and bytes. Raises OSError when it cannot be read.

    XXH3-128, as the session index digests what it indexed (``session_index.new_digest``): a second
    run hashes every log it reuses, and XXH3 does that at the speed of the disk where BLAKE2b took
    a quarter of a second per 200 MB. It tells a changed log from an unchanged one; no one gains by
    forging a log that digests like another (it would only be reported as the other was)."""
    root = Path(path)
    digest = new_digest()
    if root.is_dir():
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(file.relative_to(root).as_posix().encode("utf-8", "surrogatepass") + b"\0")
            _digest_file(file, digest)
    else:
        _digest_file(root, digest)
    return digest.hexdigest()


def _digest_file(path: Path, digest: Any) -> None:
    with open(path, "rb") as handle:  # read-only, as every log is
        while chunk := handle.read(READ_BYTES):
            digest.update(chunk)
    digest.update(b"\0")


def settings_key(settings: AuditSettings) -> bytes:
    """What, besides the log, decides its rows. Raises OSError when the pins file cannot be read."""
    digest = hashlib.blake2b(digest_size=16, person=b"ctxtop-fleet-set")
    pins = Path(settings.pins_file).read_bytes() if settings.pins_file else b""
    digest.update(orjson.dumps([FLEET_VERSION, version(), settings.encoding, settings.window, settings.log_format]))
    digest.update(hashlib.blake2b(pins, digest_size=16).digest())
    return digest.digest()


class ResultStore:
    """Session results by content digest, in ctxtop's persistent cache (none with ``CTXTOP_NO_CACHE=1``)."""

    def __init__(self, settings: AuditSettings) -> None:
        self.cache = TokenCache.default(settings.encoding)
        self.settings = settings_key(settings)

    @property
    def enabled(self) -> bool:
        return self.cache is not None

    def _key(self, digest: str) -> bytes:
        return hashlib.blake2b(self.settings + digest.encode(), digest_size=20, person=b"ctxtop-fleet").digest()

    def get(self, digest: str, path: str) -> SessionAudit | None:
        """The result kept for a log with this digest, shown under ``path``; None when there is none."""
        if self.cache is None:
            return None
        raw = self.cache.get_audit(self._key(digest))
        if raw is None:
            return None
        try:
            data = orjson.loads(raw)
            found = SessionAudit(path, data["row"], list(data["compactions"]), data["skipped"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return None  # unreadable: audited again
        return found.shown_as(path)

    def put(self, digest: str, result: SessionAudit) -> None:
        if self.cache is not None:
            self.cache.put_audit(self._key(digest), orjson.dumps({"row": result.row, "compactions": result.compactions,
                                                                  "skipped": result.skipped}))
