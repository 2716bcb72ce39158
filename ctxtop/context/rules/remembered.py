"""Auto-detected rules remembered by what the session's texts are, so a session opened again is not read again for them.

Detecting rules reads every text people wrote in the session (on a big log, read
back from the log) and cuts each into units: about as long as the rest of a warm
open. What it finds depends only on those texts and the log's format, so it is
kept in the persistent cache (beside the audits) under a digest of every block's
content digest, which the accounting holds since counting: no text is read to
make the key, nor any entry unpacked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import orjson

from ctxtop.context.rules.constraints import Constraint, Detected, detect_constraints, make_constraint
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.accounting import Accounting
from ctxtop.parsers.model import Entry

# Bump when what detection finds changes (cues, units, sources): older results are then not reused.
DETECTION_VERSION = 16  # 2: Claude Code's request to summarize the conversation is the harness's text; 3: tables, descriptive sections;
# 4: "don't" and "only" in a message describing, not telling the agent; 5: ids and facts from the text as shown;
# 6: example blocks (<example_response>) and recommended workflows state no rules; 7: ids name no address, password nor key;
# 8: a rule's first 64 facts (and its rule words); 9: ids name no address whose local part is over 64 characters;
# 10: ids name no AWS key id that starts a secret's name ("AKIA…-password=…");
# 11: ids name no part of an address with "=" in its local part (bounce addresses)
# 12: a path in a rule is one fact, never cut at an "@" ("/home/alice@corp.example.com/src"); so is a key ("sk-proj-…")
# 13: permissions holding a firm word, idioms, "not only", nouns spelled as verbs, file and command lists, titles of
# sub-items, rule nouns that only qualify a heading, 不可以 / 禁用 / 按钮, harness prompts in saved requests; ids;
# 禁用, 不许, 不允许, 不准, 避免, 切勿 among the words a rule's restatement must keep
# 14: a rule restated under a label ("Reminder: …", "再次提醒：…") is the rule stated before
# 15: 别 counts as a negation alone, not inside 特别, 分别, 别人…
# 16: no cue inside a path or file name ("docs/must-read.md")


def detection_key(accounting: Accounting, log_format: str | None) -> bytes:
    digest = hashlib.blake2b(digest_size=20, person=b"ctxtop-rules")
    digest.update(DETECTION_VERSION.to_bytes(4, "little") + (log_format or "").encode() + b"\0")
    digest.update(accounting.content_digest())
    return digest.digest()


def detected_constraints(entries: Sequence[Entry], log_format: str | None, accounting: Accounting,
                         store: TokenCache | None, *, processes: int = 1, known: Detected | None = None) -> list[Constraint]:
    """``detect_constraints(entries, log_format)``, remembered in ``store`` (when there is one); ``known``:
    what the first entries state, as ``detect_constraints`` takes it."""
    if store is None or accounting.counted != len(entries):
        return detect_constraints(entries, log_format, processes=processes, known=known)
    key = detection_key(accounting, log_format)
    blob = store.get_audit(key)
    if blob is not None:
        try:
            return [_restored(item) for item in orjson.loads(blob)]
        except (orjson.JSONDecodeError, TypeError, ValueError):
            pass  # written by another version, or damaged: detect again (and overwrite it)
    found = detect_constraints(entries, log_format, processes=processes, known=known)
    store.put_audit(key, orjson.dumps([[c.id, c.text, c.first_stated, c.cue, c.origin] for c in found]))
    return found


def _restored(item: list) -> Constraint:
    id, text, first_stated, cue, origin = item
    constraint = make_constraint(text, "auto", id=id)
    constraint.first_stated, constraint.cue, constraint.origin = first_stated, cue, origin
    return constraint
