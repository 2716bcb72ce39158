"""A persistent token-count cache, so a session opened again is not tokenized again.

Counts are keyed by the content digest the in-memory cache already uses, per
encoding, in one SQLite file (beside them, the results of compaction audits,
keyed by what the windows held: ``context.audit_cache``) in the user's cache directory
(``$CTXTOP_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctxtop``, else ``~/.cache/ctxtop``).
SQLite in WAL mode lets several ctxtop processes read and write it at once; it
is bounded (oldest rows pruned past MAX_ROWS); a corrupt file is moved aside
and rebuilt, with a warning. ``CTXTOP_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from ctxtop.context.store.base_dirs import xdg_base

MAX_ROWS = 5_000_000  # about 200 MB of cache at the most
MAX_AUDITS = 50_000  # compaction audits (a few KB each)
PRUNE_CHECK_BYTES = 256 << 20
OPEN_WAIT_SECONDS = 3  # for another process's lock on the cache, at open; then go on without the cache
BATCH = 500  # keys per query (SQLite's variable limit is higher; this keeps statements small)
# How the counts' keys are made (``tokens.content_key``), kept as the file's user_version: 1, BLAKE2b; 2, XXH3-128.
# Counts keyed otherwise can never be found again: they are dropped at open, not left to fill the cache.
KEY_SCHEME = 2


def cache_dir() -> Path:
    if os.environ.get("CTXTOP_CACHE_DIR"):
        return Path(os.environ["CTXTOP_CACHE_DIR"])
    return xdg_base("XDG_CACHE_HOME", ".cache") / "ctxtop"


def _drop_old_keys(connection: sqlite3.Connection) -> None:
    """Drop the counts kept under another key scheme, and mark the cache as of this one: in one write
    transaction, the scheme read again inside it. Read and reset as separate statements, a second ctxtop
    opening the cache at the same moment read the old scheme, then deleted the counts the first had just
    written under the new one."""
    connection.execute("begin immediate")  # (waits for another writer: the busy timeout)
    try:
        if connection.execute("pragma user_version").fetchone()[0] != KEY_SCHEME:
            connection.execute("delete from counts")
            connection.execute(f"pragma user_version = {KEY_SCHEME}")
        connection.execute("commit")
    except BaseException:
        connection.execute("rollback")
        raise


class TokenCache:
    def __init__(self, encoding: str, path: Path | None = None) -> None:
        self.encoding = encoding
        self.path = path or cache_dir() / "tokens.sqlite"
        self.warning: str | None = None
        self._connection = self._connect()

    @classmethod
    def default(cls, encoding: str) -> "TokenCache | None":
        if os.environ.get("CTXTOP_NO_CACHE"):
            return None
        try:
            return cls(encoding)
        except (OSError, sqlite3.Error):
            return None  # no cache (read-only home, say): counting still works, only slower

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._open_when_free()
        except sqlite3.OperationalError:
            raise  # locked by another process for too long, not damaged: never move it aside
        except sqlite3.DatabaseError as exc:
            # Corrupt (or not a database at all): keep it aside for a bug report, start afresh.
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            try:
                os.replace(self.path, aside)
            except FileNotFoundError:
                pass  # another ctxtop found it damaged too, and moved it first
            self.warning = f"the token cache was unreadable ({exc}); moved to {aside.name} and rebuilt"
            return self._open_when_free()

    def _open_when_free(self) -> sqlite3.Connection:
        # Turning a new file to WAL takes a lock that SQLite's busy timeout does not wait for:
        # another ctxtop opening the cache at the same moment gets "database is locked" at once.
        deadline = time.monotonic() + OPEN_WAIT_SECONDS
        pause = 0.01
        while True:
            try:
                return self._open()
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        try:
            connection.execute("pragma journal_mode=wal")
            connection.execute("pragma synchronous=normal")
            connection.execute("create table if not exists counts (encoding text, key blob, tokens integer, primary key (encoding, key)) without rowid")
            connection.execute("create table if not exists audits (key blob primary key, result blob) without rowid")
            if connection.execute("pragma user_version").fetchone()[0] != KEY_SCHEME:
                _drop_old_keys(connection)
            connection.execute("select count(*) from (select 1 from counts limit 1)").fetchone()
        except BaseException:
            connection.close()
            raise
        return connection

    def get_many(self, keys: list[bytes]) -> dict[bytes, int]:
        found: dict[bytes, int] = {}
        try:
            for start in range(0, len(keys), BATCH):
                chunk = keys[start : start + BATCH]
                marks = ",".join("?" * len(chunk))
                query = f"select key, tokens from counts where encoding = ? and key in ({marks})"  # noqa: S608 - placeholders only
                found.update(self._connection.execute(query, (self.encoding, *chunk)).fetchall())
        except sqlite3.Error as exc:
            self.warning = f"the token cache could not be read ({exc}); counting without it"
        return found

    def put_many(self, counts: dict[bytes, int]) -> None:
        if not counts:
            return
        try:
            with self._connection:
                self._connection.execute("begin")
                self._connection.executemany(
                    "insert or ignore into counts (encoding, key, tokens) values (?, ?, ?)",
                    ((self.encoding, key, tokens) for key, tokens in counts.items()),
                )
        except sqlite3.Error as exc:
            self.warning = f"the token cache could not be written ({exc}); counts were kept in memory"

    def get_audit(self, key: bytes) -> bytes | None:
        try:
            row = self._connection.execute("select result from audits where key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self.warning = f"the cache could not be read ({exc}); auditing without it"
            return None
        return row[0] if row else None

    def put_audit(self, key: bytes, result: bytes) -> None:
        try:
            self._connection.execute("insert or replace into audits (key, result) values (?, ?)", (key, result))
        except sqlite3.Error as exc:
            self.warning = f"the cache could not be written ({exc}); the audit was kept in memory"

    def maybe_prune(self) -> None:
        """Prune only when the file has grown big: counting rows is not free."""
        try:
            if self.path.stat().st_size > PRUNE_CHECK_BYTES:
                self.prune()
        except OSError:
            pass

    def prune(self, max_rows: int = MAX_ROWS) -> None:
        """Keep the cache bounded: drop an arbitrary excess of rows (any count can be recomputed)."""
        try:
            (rows,) = self._connection.execute("select count(*) from counts").fetchone()
            if rows > max_rows:
                self._connection.execute(
                    "delete from counts where (encoding, key) in (select encoding, key from counts limit ?)", (rows - max_rows,))
            (audits,) = self._connection.execute("select count(*) from audits").fetchone()
            if audits > MAX_AUDITS:
                self._connection.execute("delete from audits where key in (select key from audits limit ?)", (audits - MAX_AUDITS,))
        except sqlite3.Error:
            pass
