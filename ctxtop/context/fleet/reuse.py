"""What a second run may take from the first: results kept under the session's content digest.

A session's rows depend only on its bytes (with those of the sub-agent transcripts a Claude Code
session's audit reads beside it) and on how it is audited (the pins file's content, the encoding,
the window, a forced format, ctxtop's version), so they are kept in ctxtop's persistent cache
(beside the token counts and compaction audits) under a digest of exactly that. A log that did
not change is not read again beyond hashing it; one that did is audited anew — and its unchanged
compactions still come from the audit cache.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ctxtop.context.fleet.session import AuditSettings, SessionAudit
from ctxtop.context.store.digest import new_digest
from ctxtop.context.store.source import open_file
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.subagent_files import nested_transcripts
from ctxtop.context.window.subagents import owner_session_id
from ctxtop.parsers.jsonl import DecodeError, loads
from ctxtop.version import version

# Bump when what a row holds changes: older results are then audited again.
FLEET_VERSION = 48  # 2: Codex cache reads after a compaction; cost_estimated of an unpriced summarizing call. 3: XXH3 digests;
# 4: rule detection leaves Claude Code's summarizing request out, alert details quote cleaned rules; 5: rules in tables and
# fewer in descriptive sections, Claude Code messages sent from the queue within a turn, every Inspect call's usage;
# 6: only a cap on money caps a call's amounts, the summary's tokens counted exactly whatever the token cache held;
# 7: a summary's slashed names looked for part by part, its claims without their elaboration; 8: a path held by its
# project-relative form; 9: a number's unit ends with its word;
# 10: a turn's opening call that reports more is no baseline for an implicit compaction, Gemini's cache reads;
# 11: file names spelled out as bash's $'…' does, not cleaned (two names cleaned alike were one);
# 12: a rule's id and facts from its text as shown; 13: amounts in strings, and in inputs JSON cannot decode whole;
# 14: a path's tail held only as a path of its own; 15: money caps read from amounts written as money;
# 16: caps over/above, counted things, amounts' objects and lists; 17: example blocks and recommended workflows;
# 18: texts cut never inside an email address's local part, and marked "…" where they were cut;
# 19: money caps: amount fields by their words, cents, commands' and bodies' amounts, order lines, Chinese numerals
# 20: amounts in Chinese numerals of up to 32 characters, and 万亿; a string of more than 100 characters is no amount
# 21: texts cut never inside an address that starts after a sign ("-john@…")
# 22: rule ids name no address, password nor key
# 23: money caps: an amount in another currency than the cap's not counted a violation; httpie's fields; Stripe's cents
# 24: an email address in any script ("jöhn@münchen.de", "张三@例子.中国"): never in a rule id, never cut inside
# 25: a rule's first 64 facts (and its rule words)
# 26: dollars with their country ("US$180"), caps on transfers
# 27: an amount with a fraction sent to Stripe in whole units
# 28: an address whose local part is over 64 characters: never in a rule id, masked by --redact
# 29: rule ids name no AWS key id that starts a secret's name ("AKIA…-password=…")
# 30: an address with "=" in its local part (bounce addresses): never in a rule id, masked whole by --redact
# 31: forbid patterns in a call's input strings, mail services' tools an email channel, state files by whole words,
# no parameter names lost, no summarizing call priced for a microcompact
# 32: logs read anew: images in tool outputs and parts, Codex rollbacks, Roo condenses, thoughts Gemini never resends
# 33: no identifier lost from inside a hyphenated word (a key's body after "sk-ant-api03-", which --redact did not mask)
# 34: an ADK session's started in ISO 8601 (UTC), not its epoch seconds, nor an event's position when it has no time
# 35: a path (lost, or a rule's fact) never cut at an "@", which gave back an address --redact masked; a key in a rule one fact, whole
# 36: a restatement keeps a rule's negation only in a sentence that names the rule's terms
# 37: a rule forbids email or phone numbers only where a clause of it names them and negates
# 38: no phone number inside a hash or an id, after a decimal point, or in a version's build metadata
# 39: a mail tool that only reads (read_email_draft, gmail search) is no email channel
# 40: a cap with no currency read when a verb follows its number ("any purchase over 1000 needs my approval")
# 41: no amount in a command that only searches, edits or prints text (grep, sed, echo > file, git)
# 42: a rule restated under a label ("Reminder: …") is the rule stated before
# 43: 别 counts as a negation alone, not inside 特别, 分别, 别人…
# 44: a rule held only paraphrased that a later compaction loses is alerted (paraphrased → lost)
# 45: an Inspect sample's `started`; a Claude Code rewind is no implicit compaction
# 46: `started` in UTC to the millisecond, whatever offset the log wrote
# 47: no rule cue inside a path or file name ("docs/must-read.md")
# 48: a rule paraphrased before a compaction and lost after it is constraint evaporation
READ_BYTES = 8 << 20


def content_digest(path: str | os.PathLike, siblings: Siblings | None = None) -> str:
    """A digest of the log's bytes, and of the sub-agent transcripts its audit reads (``companion_files``: the
    session's own file may stay as it was while they change); for a session folder (Cline, OpenHands events,
    opencode storage), of every file's relative name and bytes. Raises OSError when it cannot be read.

    The project's digest (``store.digest``): a second run hashes every log it reuses, at the speed of the disk.

    ``siblings``: what a run knows of the transcripts beside its logs (a folder listed, and each first line read, once)."""
    root = Path(path)
    digest = new_digest()
    if root.is_dir():
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(file.relative_to(root).as_posix().encode("utf-8", "surrogatepass") + b"\0")
            _digest_file(file, digest)
    else:
        _digest_file(root, digest)
        # Nothing more for a log without sub-agents: it keeps the digest an earlier version gave it, and its result.
        log = root.resolve()
        for file in companion_files(log, siblings or Siblings()):
            digest.update(b"\1" + file.relative_to(log.parent).as_posix().encode("utf-8", "surrogatepass") + b"\0")
            try:
                _digest_file(file, digest)
            except OSError as exc:
                # Its audit reads the session without it (a transcript it could not read): the session is not skipped
                # for it, and is read again once the file can be read.
                digest.update(b"\2unreadable " + str(exc.errno).encode() + b"\0")
    return digest.hexdigest()


def companion_files(log: Path, siblings: Siblings) -> list[Path]:
    """The files beside ``log`` that its audit reads, as ``SubagentScan`` finds them: a Claude Code session's
    sub-agent transcripts (2.1's ``<session>/subagents/``, 2.0's ``agent-*.jsonl`` beside it that carry its
    session id) with their ``.meta.json``. Regular files only: a FIFO would block the hash for ever."""
    if log.name.startswith("agent-"):
        return []  # a sub-agent's own transcript: its siblings are the session's sub-agents, not its own
    candidates, _skipped = nested_transcripts(log)  # (what it did not look at, the audit's scan says)
    beside = siblings.of(log.parent)
    if beside.every:
        # Not every transcript in a 2.0 project folder: one session's new sub-agent would re-audit all the others.
        # A log whose id is not found early takes them all in (read again for nothing, never reused wrongly).
        own = _parsed_session_id(log)
        candidates += beside.every if own is None else beside.by_owner.get(own, [])
    files = []
    for candidate in candidates:
        files += [candidate, candidate.with_suffix(".meta.json")]
    return [file for file in files if file.is_file()]


@dataclass(slots=True)
class Beside:
    every: list[Path]  # a folder's agent-*.jsonl, sorted
    by_owner: dict[str | None, list[Path]]  # and by the session id each one's first record carries


class Siblings:
    """The 2.0 sub-agent transcripts (``agent-*.jsonl``) of each folder a run digests logs in, by whose they are: the
    folder listed and each one's first line read once a run. Every session of a project folder asked of every
    transcript beside it: a folder of 100 sessions and 5,000 transcripts took 7 s to digest, 1,000 sessions minutes."""

    def __init__(self) -> None:
        self._folders: dict[Path, Beside] = {}

    def of(self, folder: Path) -> Beside:
        known = self._folders.get(folder)
        if known is None:
            every = sorted(folder.glob("agent-*.jsonl"))
            by_owner: dict[str | None, list[Path]] = {}
            for transcript in every:
                by_owner.setdefault(owner_session_id(transcript), []).append(transcript)
            known = self._folders[folder] = Beside(every, by_owner)
        return known


SESSION_ID_LINES = 200  # a Claude Code log's first records without one (summaries, snapshots) are a few
LINE_BYTES = 1 << 20  # a first line longer (a JSON log of one line) is not read whole: the id is then not known


def _parsed_session_id(log: Path) -> str | None:
    """The id the audit's parser gives ``log``: the first ``sessionId`` of a record with a type, decoded as the parser decodes
    it (a lone surrogate escape too), or None when not in the first lines. Not ``owner_session_id``, a transcript's first
    record's: a log may open with records that carry no id, or a decoy's that the parser does not take. Another id than the parser's would leave
    out of the digest the sub-agents the audit reads: their changes would not be seen."""
    try:
        with open_file(log) as handle:
            for _ in range(SESSION_ID_LINES):
                line = handle.readline(LINE_BYTES)
                if not line or len(line) == LINE_BYTES:
                    break  # the end, or a line too long to be read: not known (every transcript beside it taken in)
                try:
                    record = loads(line)
                except DecodeError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("type"), str) and isinstance(record.get("sessionId"), str):
                    return record["sessionId"]
    except OSError:
        pass
    return None


def _digest_file(path: Path, digest: Any) -> None:
    with open_file(path) as handle:  # read-only, as every log is; a regular file only (a FIFO swapped in would block)
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
