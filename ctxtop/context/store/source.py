"""Opening a log for reading: read-only, regular files only, errors as one line."""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ctxtop.parsers import registry
from ctxtop.parsers.jsonl import loads

Buffer = bytes | mmap.mmap
# Logs up to this size are read into memory; bigger ones are memory-mapped (their pages
# are read on demand). Only a mapped file truncated while it is being read can still fail hard.
READ_WHOLE_BYTES = 64 << 20


class SourceError(ValueError):
    """The log cannot be read; the message is one line, fit for the user."""


class NotRegularFile(OSError):
    """A directory, FIFO, socket or device where a file was expected (``strerror`` says so in words)."""


def open_regular(path: str | os.PathLike) -> int:
    """A read-only descriptor of ``path``, which must be a regular file. Raises OSError otherwise.

    Opened non-blocking and checked on the descriptor itself (not by a stat before it): opening a
    FIFO blocks until a writer comes, and a device such as /dev/zero never ends, so whatever a path
    names when it is opened, only a regular file is ever read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise NotRegularFile(errno.EISDIR, "is a directory, not a file", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a FIFO, socket or device cannot be read)", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | os.PathLike):
    """``open(path, "rb")`` for regular files only (see ``open_regular``)."""
    return os.fdopen(open_regular(path), "rb")


def check_log(path: str | os.PathLike) -> os.stat_result:
    """Whether ``path`` can be read as a log: a non-empty regular file. Raises SourceError (one line)."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except PermissionError:
        raise SourceError(f"{path}: permission denied") from None
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise SourceError(f"{path}: is a directory, not a session file")
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(f"{path}: not a regular file (a FIFO, socket or device cannot be read as a log)")
    if info.st_size == 0:
        raise SourceError(f"{path}: the file is empty")
    if not os.access(path, os.R_OK):
        raise SourceError(f"{path}: permission denied")
    return info


def read_log(path: str | os.PathLike) -> Buffer:
    """The bytes of a log: read whole when small, memory-mapped read-only when big (never opened for writing)."""
    path = Path(path)
    info = check_log(path)
    try:
        with open_file(path) as handle:
            if info.st_size <= READ_WHOLE_BYTES:
                # Read, not mapped: a file truncated under a mapping kills the process (SIGBUS).
                return handle.read()
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except PermissionError:
        raise SourceError(f"{path}: permission denied") from None
    except (OSError, ValueError) as exc:
        raise SourceError(f"{path}: cannot be read ({exc})") from None


def read_head(path: str | os.PathLike, size: int) -> bytes:
    """The first ``size`` bytes of a log (checked as ``read_log`` does)."""
    check_log(path)
    try:
        with open_file(path) as handle:
            return handle.read(size)
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_chunks(path: str | os.PathLike, size: int, start: int = 0) -> Iterator[bytes]:
    """The bytes of a log from ``start``, ``size`` at a time, with plain reads (a mapping of a file truncated
    meanwhile kills the process; a read just comes back short). Each chunk can be dropped once used."""
    check_log(path)
    try:
        handle = open_file(path)
        handle.seek(start)
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with handle:
        while True:
            try:
                chunk = handle.read(size)
            except OSError as exc:
                raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from None
            if not chunk:
                return
            yield chunk


def read_appended(path: str | os.PathLike, offset: int, size: int) -> bytes:
    """The bytes of ``path`` from ``offset`` up to ``size`` (fewer if it shrank meanwhile), read-only."""
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        raise SourceError(f"{path}: the file disappeared") from None
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    try:
        chunks, position = [], offset
        while position < size:
            chunk = os.pread(fd, min(size - position, 8 << 20), position)
            if not chunk:
                break
            chunks.append(chunk)
            position += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# A session folder is read whole; these bound what "whole" may mean.
TREE_MAX_DEPTH = 3
TREE_MAX_FILES = 200_000


def read_tree(path: str | os.PathLike) -> dict[str, bytes]:
    """The JSON files of a session folder as ``{relative posix path: bytes}``, read-only."""
    root = Path(path)
    files: dict[str, bytes] = {}
    try:
        for directory, subdirectories, names in os.walk(root):
            depth = len(Path(directory).relative_to(root).parts)
            if depth >= TREE_MAX_DEPTH:
                subdirectories[:] = []
            for name in names:
                if not name.endswith(".json"):
                    continue
                full = Path(directory, name)
                try:
                    handle = open_file(full)
                except NotRegularFile:
                    continue
                with handle:
                    files[full.relative_to(root).as_posix()] = handle.read()
                if len(files) > TREE_MAX_FILES:
                    raise SourceError(f"{path}: more than {TREE_MAX_FILES:,} files; open one session folder")
    except PermissionError:
        raise SourceError(f"{path}: permission denied") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return files


def tree_names(path: str | os.PathLike) -> list[str]:
    """Some relative names of the JSON files a folder holds (without reading them), enough for detection."""
    root = Path(path)
    names: list[str] = []
    for visited, (directory, subdirectories, files) in enumerate(os.walk(root)):
        if len(Path(directory).relative_to(root).parts) >= TREE_MAX_DEPTH:
            subdirectories[:] = []
        names += [Path(directory, f).relative_to(root).as_posix() for f in files if f.endswith(".json")]
        if len(names) > 2000 or visited > 200:  # a big folder is not one session: stop looking
            break
    return names


def tree_signature(path: str | os.PathLike) -> tuple[int, int, int]:
    """(files, total size, newest mtime) of a session folder's JSON files: it changes when the folder does."""
    count = size = newest = 0
    root = Path(path)
    for directory, subdirectories, files in os.walk(root):
        if len(Path(directory).relative_to(root).parts) >= TREE_MAX_DEPTH:
            subdirectories[:] = []
        for name in files:
            if name.endswith(".json"):
                try:
                    info = os.stat(os.path.join(directory, name))
                except OSError:
                    continue
                count, size, newest = count + 1, size + info.st_size, max(newest, info.st_mtime_ns)
    return count, size, newest


def split_sample(path: str | os.PathLike) -> tuple[str | os.PathLike, int]:
    """``log.eval#3`` → (``log.eval``, 3): one sample of a log that holds several. A file that
    really is named with a ``#`` is taken as it is."""
    split = registry.split_sample_suffix(str(path))
    if split is not None and not Path(path).exists() and Path(split[0]).exists():
        return split
    return path, 1


def database_format(path: str | os.PathLike) -> str | None:
    """The format kept in the database file at ``path`` (told by its first bytes), or None."""
    try:
        # Only a regular file: opening a FIFO to peek at it would wait for a writer forever.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open_file(path) as handle:
            return registry.detect_database(handle.read(64))
    except OSError:
        return None


def read_opencode_db(path: str | os.PathLike) -> dict[str, bytes]:
    """opencode's SQLite database as the JSON tree its older `storage/` folder holds, read without writing.

    Nothing is created or written beside the database: SQLite opening a WAL database makes its
    ``-wal`` and ``-shm`` files (and readers write into ``-shm``). With no ``-wal`` beside it, all
    its content is in the file, which is opened ``immutable=1`` (no locks, no journal, no
    companions); with one, the file and its ``-wal`` are read from a private copy in a temporary
    folder, so that the writes not yet checkpointed are seen too.

    Raises SourceError when it cannot be read or is not opencode's.
    """
    import sqlite3

    wal = Path(f"{path}-wal")
    try:
        if wal.is_file() and wal.stat().st_size:
            with tempfile.TemporaryDirectory(prefix="ctxtop-db-") as private:
                copy = Path(private, "opencode.db")
                _copy_regular(path, copy)
                _copy_regular(wal, Path(f"{copy}-wal"))
                try:
                    return _read_opencode_connection(sqlite3.connect(copy), path)
                except SourceError:
                    pass  # copied in the middle of a checkpoint: the file alone is still consistent
        return _read_opencode_connection(sqlite3.connect(f"{Path(path).resolve().as_uri()}?immutable=1", uri=True), path)
    except (OSError, sqlite3.Error) as exc:
        raise SourceError(f"{path}: not an opencode database ctxtop can read ({exc})") from None


def _copy_regular(source: str | os.PathLike, target: Path) -> None:
    with open_file(source) as reading, open(target, "wb") as writing:
        shutil.copyfileobj(reading, writing, 8 << 20)


def _read_opencode_connection(connection, path: str | os.PathLike) -> dict[str, bytes]:
    import json
    import sqlite3

    try:
        connection.row_factory = sqlite3.Row
        tree: dict[str, bytes] = {}
        for row in connection.execute("select * from session"):
            fields = dict(row)
            fields.setdefault("time", {"created": fields.get("time_created"), "updated": fields.get("time_updated")})
            tree[f"session/{fields.get('project_id', '_')}/{fields['id']}.json"] = json.dumps(fields, default=str).encode()
        for table, parent_key, parent_column in (("message", "sessionID", "session_id"), ("part", "messageID", "message_id")):
            for row in connection.execute(f"select * from {table}"):  # noqa: S608 - fixed table names
                fields = dict(row)
                try:
                    data = loads(fields.get("data") or "{}")  # bounded depth, no lone surrogates: as every log record
                except ValueError:
                    data = {}
                data = {**(data if isinstance(data, dict) else {}), "id": fields["id"], parent_key: fields[parent_column]}
                if table == "part":
                    data.setdefault("sessionID", fields.get("session_id"))
                data.setdefault("time", {"created": fields.get("time_created")})
                tree[f"{table}/{fields[parent_column]}/{fields['id']}.json"] = json.dumps(data, default=str).encode()
        return tree
    except (sqlite3.Error, KeyError) as exc:
        raise SourceError(f"{path}: not an opencode database ctxtop can read ({exc})") from None
    finally:
        connection.close()
