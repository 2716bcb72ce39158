"""Whole audits remembered for a log read again unchanged: a second `export` or `check` audits nothing.

The pair cache (``cache.py``) spares reading the windows' texts again, but an
audit still walks every entry twice to find the compactions, the tool calls and
the windows: most of a warm export. What an audit finds depends on the entries,
their counts, the constraints and the sub-agents' compaction calls, so a session
opened whole from unchanged bytes (``Session.read_digest``: not a followed log,
whose later lines change what earlier entries report) keeps its audit in the
persistent cache under a digest of all of those and AUDIT_VERSION.

An audit taken from here has no ``progress``: a session read whole is never
audited again from where it stopped.
"""

from __future__ import annotations

import hashlib
import marshal
from dataclasses import astuple
from typing import Any

import orjson

from ctxtop.context.audit.alerts import Alert, AlertKind
from ctxtop.context.audit.cache import AUDIT_VERSION, plain_status
from ctxtop.context.rules.constraints import Constraint, Status
from ctxtop.context.window.session import CompactionEvent, Session

_KINDS = {kind.key: kind for kind in AlertKind}


class RememberedAudit:
    """The audit of one session by one set of constraints, in the persistent cache (when there is one)."""

    def __init__(self, session: Session, constraints: list[Constraint]) -> None:
        self.store = session.counter.store
        self.key = whole_audit_key(session, constraints) if self.store is not None else None

    def recall(self) -> tuple[list[tuple[Any, ...]], list[Alert]] | None:
        """The findings kept for this audit (see ``decode_audit``), or None."""
        if self.store is None or self.key is None:
            return None
        blob = self.store.get_audit(self.key)
        return decode_audit(blob) if blob is not None else None

    def keep(self, compactions: list, alerts: list[Alert]) -> None:
        if self.store is not None and self.key is not None and (blob := encode_audit(compactions, alerts)) is not None:
            self.store.put_audit(self.key, blob)


def whole_audit_key(session: Session, constraints: list[Constraint]) -> bytes | None:
    """What the session's audit by ``constraints`` depends on, digested; None when it cannot be known
    without reading the entries (a followed log, a log not read as JSON Lines)."""
    if session.read_digest is None:
        return None
    digest = hashlib.blake2b(digest_size=20, person=b"ctxtop-audits")
    digest.update(AUDIT_VERSION.to_bytes(4, "little") + session.read_digest)
    digest.update(f"{session.format}\0{session.counter.encoding_name}\0{session.window_override}\0{session.final_before()}".encode())
    digest.update(session.accounting.content_digest() + session.accounting.counts_digest())
    calls = session.subagents.summarizing_calls() if session.subagents is not None else []
    digest.update(repr(calls).encode("utf-8", "surrogatepass"))
    rules = [[c.id, c.text, c.source, c.facts, c.forbid, c.first_stated, c.cue, c.origin] for c in constraints]
    digest.update(orjson.dumps(rules))  # (not marshal: its bytes depend on which equal objects are shared)
    return digest.digest()


def encode_audit(compactions: list, alerts: list[Alert]) -> bytes | None:
    """An audit's findings (``run.CompactionAudit`` list, alerts) as bytes; None when they hold a value
    that has no plain form (they are then audited again next time)."""
    plain = ([(astuple(c.event), c.after_message, {cid: (plain_status(b), plain_status(a)) for cid, (b, a) in c.constraints.items()},
               c.lost_items, c.drift, c.forensics) for c in compactions],
             [(a.kind.key, a.message, a.compaction, a.constraint, a.detail) for a in alerts])
    try:
        return marshal.dumps(plain)
    except ValueError:
        return None


def decode_audit(blob: bytes) -> tuple[list[tuple[Any, ...]], list[Alert]] | None:
    """The findings ``encode_audit`` wrote, as (event, after, statuses, lost items, drift, forensics) rows and
    alerts; None when the blob is not one (damaged, or from another version of ctxtop)."""
    try:
        compactions, alerts = marshal.loads(blob)
        rows = [(CompactionEvent(*event), after, {cid: (Status(*b), Status(*a)) for cid, (b, a) in statuses.items()},
                 lost, drift, forensics) for event, after, statuses, lost, drift, forensics in compactions]
        return rows, [Alert(_KINDS[kind], *rest) for kind, *rest in alerts]
    except (EOFError, ValueError, TypeError, KeyError, AttributeError):
        return None
