"""Compaction audits remembered by what the two windows held.

Auditing a compaction reads the text of the windows before and after it, which
on a big session means reading much of the log back. The result depends only
on what those windows held and on the constraints, so it is kept under a digest
of exactly that: each block's message, category, cleared and opaque flags and
content digest (kept by the accounting since counting: no text is read to make
the key), the constraints audited, and AUDIT_VERSION. A session opened again,
or a live one that compacts again, audits only what is new. Results are kept
for the process (the last RECENT_BYTES) and in the persistent cache beside the token
counts (``CTXTOP_NO_CACHE=1`` leaves only the first).
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections import OrderedDict
from typing import Any

import orjson

from ctxtop.context.rules.constraints import Constraint, Status
from ctxtop.context.store.digest import new_digest
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.accounting import Accounting
from ctxtop.context.window.replay import Window
from ctxtop.context.window.tokens import content_key

# Bump when what an audit finds changes (statuses, lost items): older results are then not reused.
AUDIT_VERSION = 46  # 3: with what the forensics read from the windows; 4: paths lost without devices and one-part paths;
# 5: alert details quote rules cleaned of control sequences; 6: Claude Code messages sent from the queue within a turn;
# 7: only a cap on money caps a call's amounts; 8: the summary's tokens counted exactly, whatever the token cache held;
# 9: a summary's slashed names looked for part by part, its claims without their elaboration; 10: a path held by its
# project-relative form; 11: a number's unit ends with its word;
# 12: a turn's opening call that reports more is no baseline for an implicit compaction; 13: amounts in strings,
# and in inputs JSON cannot decode whole; 14: a path's tail held only as a path of its own;
# 15: money caps read from amounts written as money, with their scale; 16: caps over/above, counted things, amounts'
# objects and lists; 17: texts cut never inside an email address's local part, and marked "…" where they were cut;
# 18: money caps: amount fields by their words, cents, commands' and bodies' amounts, order lines, Chinese numerals;
# 19: texts cut never inside an address that starts after a sign ("-john@…"); 20: rule ids name no address, password nor key;
# 21: amounts in another currency than a cap's not compared (amount_not_compared), httpie's and form fields, Stripe's cents;
# 22: a rule's first 64 facts (and its rule words); 23: dollars with their country ("US$180"), caps on transfers;
# 24: an amount with a fraction sent to Stripe in whole units; 25: rule ids name no address of a long local part;
# 26: rule ids name no AWS key id that starts a secret's name ("AKIA…-password=…");
# 27: rule ids name no address with "=" in its local part, texts never cut inside one
# 28: a state file named by a whole word (planner.py is none)
# 29: identifiers lost: not a tool call's parameter names
# 30: no summarizing call priced for a compaction that calls no model; a forbid pattern also searched in each string of a call's input
# 31: a Gmail, Outlook, Mailgun or SendGrid tool is an email channel
# 32: logs read anew: images in tool outputs and parts, Codex rollbacks, Roo condenses, thoughts Gemini never resends
# 33: a hook's frame ("SessionStart:compact hook additional context:") is no fact lost
# 34: no identifier lost from inside a hyphenated word (a key's body after "sk-ant-api03-")
# 35: a path (lost, or a rule's fact) never cut at an "@" ("/home/alice@corp.example.com/src"); a key in a rule one fact, whole ("sk-proj-…")
# 36: a restatement keeps a rule's negation only in a sentence that names the rule's terms
# 37: a rule forbids email or phone numbers only where a clause of it names them and negates
# 38: no phone number inside a hash or an id, after a decimal point, or in a version's build metadata
# 39: a mail tool that only reads (read_email_draft, gmail search) is no email channel
# 40: a cap with no currency read when a verb follows its number ("any purchase over 1000 needs my approval")
# 41: no amount in a command that only searches, edits or prints text (grep, sed, echo > file, git)
# 42: 别 counts as a negation alone, not inside 特别, 分别, 别人…
# 43: a rule held only paraphrased that a later compaction loses is alerted (paraphrased → lost)
# 44: Inspect messages have times (a resumed sample is told from a compaction); a Claude Code rewind is no implicit compaction
# 45: windows keyed by XXH3-128 digests of their blocks (``window_key``, ``tokens.content_key``)
# 46: a rule paraphrased before a compaction and lost after it evaporated there (a failure mode)
RECENT_BYTES = 8 << 20  # results kept in memory (a result with hundreds of constraints is ~100 KB)

_BLOCK = struct.Struct("<q??")  # message, cleared, opaque


def window_key(window: Window, accounting: Accounting) -> bytes:
    """A digest (``store.digest``) of what ``window`` holds, made from the accounting's content digests
    (``tokens.content_key``): each audit digests every block of two windows."""
    digest = new_digest()
    for item in window.blocks:
        digest.update(_BLOCK.pack(item.entry.index, item.cleared, item.block.opaque))
        digest.update(item.category.encode())
        # A compaction's replacement history (position -1) is not counted per block: digest its text.
        digest.update(accounting.digest(item.entry.index - 1, item.position) if item.position >= 0
                      else content_key(item.block.text))
    return digest.digest()


def pair_key(before: bytes, after: bytes, constraints: list[Constraint], compaction: int) -> bytes:
    digest = hashlib.blake2b(digest_size=20, person=b"ctxtop-audit")
    # The compaction's message too: the forensics tell its summary from the ones before it by where it is.
    digest.update(AUDIT_VERSION.to_bytes(4, "little") + compaction.to_bytes(8, "little", signed=True) + before + after)
    digest.update(orjson.dumps([[c.id, c.text, c.facts] for c in constraints]))
    return digest.digest()


class AuditCache:
    """Remembered audit results, in memory and (when there is one) in the persistent cache."""

    _recent: OrderedDict[bytes, bytes] = OrderedDict()  # shared by every session of the process
    _recent_bytes = 0
    _lock = threading.Lock()

    def __init__(self, store: TokenCache | None) -> None:
        self.store = store
        self.hits = 0

    def get(self, key: bytes) -> tuple[dict[str, tuple[Status, Status]], dict[str, list[str]], dict[str, Any]] | None:
        with self._lock:
            raw = self._recent.get(key)
            if raw is None and self.store is not None:
                raw = self.store.get_audit(key)
            if raw is None:
                return None
            self._remember(key, raw)
        try:
            data = orjson.loads(raw)
            statuses = {cid: (Status(*before), Status(*after)) for cid, (before, after) in data["constraints"].items()}
            result = statuses, {kind: list(items) for kind, items in data["lost_items"].items()}, dict(data["forensics"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None  # an unreadable entry is audited again
        self.hits += 1
        return result

    def put(self, key: bytes, statuses: dict[str, tuple[Status, Status]], lost_items: dict[str, list[str]],
            forensics: dict[str, Any]) -> None:
        raw = orjson.dumps({"constraints": {cid: [plain_status(before), plain_status(after)] for cid, (before, after) in statuses.items()},
                            "lost_items": lost_items, "forensics": forensics})
        with self._lock:
            self._remember(key, raw)
            if self.store is not None:
                self.store.put_audit(key, raw)

    @classmethod
    def _remember(cls, key: bytes, raw: bytes) -> None:
        old = cls._recent.pop(key, None)
        cls._recent_bytes += len(raw) - (len(old) if old is not None else 0)
        cls._recent[key] = raw
        while cls._recent_bytes > RECENT_BYTES and len(cls._recent) > 1:
            cls._recent_bytes -= len(cls._recent.popitem(last=False)[1])

    @classmethod
    def forget(cls) -> None:
        """Drop what the process remembers (the persistent cache stays): as a new process starts."""
        with cls._lock:
            cls._recent.clear()
            cls._recent_bytes = 0


def plain_status(status: Status) -> list[Any]:
    """``status`` as plain data (``Status(*plain)`` makes it again), for the caches."""
    return [status.status, status.found_in, status.missing_facts]
