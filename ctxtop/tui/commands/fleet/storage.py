"""Logs and outputs in object stores (S3 and anything S3-compatible, GCS, …) through fsspec.

A PATH or ``--out`` with a scheme (``s3://bucket/prefix``) is read and written with fsspec,
given the ``--storage-option KEY=VALUE`` options (``endpoint_url=http://…`` for an S3-compatible
store such as an OBS bucket). A log is fetched into a private temporary folder to be audited:
ctxtop reads files, and never writes beside the log.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ctxtop.context.store.digest import new_digest
from ctxtop.tui.commands.fleet.extra import need
from ctxtop.tui.discover import SUBAGENT_FOLDER
from ctxtop.tui.errors import UsageError

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(text: str) -> bool:
    """Whether ``text`` names a place fsspec reaches (a local ``file://`` path is a path)."""
    return bool(_URL.match(text)) and not text.startswith("file://")


def local_path(text: str) -> str:
    return text.removeprefix("file://")


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; a VALUE that is JSON (true, 3, {"region_name": "x"}) is taken as such."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"--storage-option takes KEY=VALUE, not {pair!r}")
        try:
            options[key.strip()] = orjson.loads(value)
        except orjson.JSONDecodeError:
            options[key.strip()] = value
    return options


def filesystem(url: str, options: Mapping[str, Any]) -> tuple[Any, str]:
    """The fsspec filesystem for ``url`` and the path inside it."""
    core = need("fsspec.core")
    try:
        return core.url_to_fs(url, **options)
    except (ImportError, ValueError) as exc:  # no implementation for the scheme (s3fs missing), or a bad option
        raise UsageError(f"cannot reach {url}: {exc}") from None


def fetch(url: str, options: Mapping[str, Any], folder: str) -> str:
    """Copy the object at ``url`` into ``folder`` (keeping its name: detection may read it) and return the copy's path.
    A Claude Code session's sub-agent transcripts (``<session>/subagents/``) come with it, as they lie beside it on
    disk: the compaction sub-agent's logged call prices the compaction, as it does for a local session."""
    fs, inside = filesystem(url, options)
    target = Path(folder) / (Path(inside).name or "log")
    fs.get_file(inside, str(target))
    into = target.with_suffix("") / SUBAGENT_FOLDER
    for name in subagent_objects(fs, inside):
        inner = Path(name[len(subagent_prefix(inside)):])
        if inner.is_absolute() or ".." in inner.parts:
            continue  # (a store's key names no place outside the folder)
        (into / inner).parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(name, str(into / inner))
    return str(target)


def subagent_prefix(inside: str) -> str:
    """Where a session object's sub-agent transcripts lie: ``<session>/subagents/`` beside ``<session>.jsonl``."""
    return f"{inside.removesuffix('.jsonl')}/{SUBAGENT_FOLDER}/"


def subagent_objects(fs: Any, inside: str, listing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The sub-agent objects a session's audit reads (``agent-*`` under its ``subagents/``), by key, with what the
    store says of each. ``listing``: a ``find(detail=True)`` already made of a prefix that holds them all.
    The fetch and the fingerprint both take them from here, so that what is reused is keyed on what was read."""
    if not inside.endswith(".jsonl"):
        return {}
    prefix = subagent_prefix(inside)
    if listing is None:
        try:
            listing = fs.find(prefix.rstrip("/"), detail=True)
        except Exception:  # noqa: BLE001 - none there, or not listable: the session is audited without them
            return {}
    assert listing is not None
    keys = listing if isinstance(listing, Listing) else Listing(listing)
    return {name: info for name, info in keys.under(prefix)
            if name.rsplit("/", 1)[-1].startswith("agent-") and info.get("type") != "directory"}


class Listing(Mapping[str, Any]):
    """A ``find(detail=True)`` with its keys sorted once: the keys under a prefix are found by bisection. Every session
    of a listing asks for its sub-agents: each going through the whole listing made a run of 20,000 sessions take
    minutes before it read one."""

    def __init__(self, found: Mapping[str, Any]) -> None:
        self._found = found
        self._keys = sorted(found)

    def __getitem__(self, name: str) -> Any:
        return self._found[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def under(self, prefix: str) -> Iterator[tuple[str, Any]]:
        """The keys that start with ``prefix``, in order, with what the store says of each."""
        for index in range(bisect.bisect_left(self._keys, prefix), len(self._keys)):
            name = self._keys[index]
            if not name.startswith(prefix):
                break
            yield name, self._found[name]


def fingerprint(fs: Any, inside: str, listing: Mapping[str, Any] | None = None) -> str:
    """What the store says identifies the content a session's audit reads: the object's ETag and size, and those
    of its sub-agent objects with their keys (a sub-agent transcript may change, appear or go while the session's
    own object stays as it was). ``listing``: as ``subagent_objects`` takes it, with the session's object too."""
    info = listing.get(inside) if listing is not None else None
    parts = [_identity(fs, inside, info if info is not None else fs.info(inside))]
    prefix = subagent_prefix(inside)
    parts += [f"{name[len(prefix):]}={_identity(fs, name, agent)}" for name, agent in subagent_objects(fs, inside, listing).items()]
    if len(parts) == 1:
        return parts[0]  # (a session without sub-agents keeps the fingerprint it had, and its kept result)
    digest = new_digest()
    digest.update("\0".join(parts).encode("utf-8", "surrogatepass"))
    return f"{parts[0]}+{digest.hexdigest()}"


def _identity(fs: Any, inside: str, info: Mapping[str, Any]) -> str:
    tag = info.get("ETag") or info.get("etag") or info.get("md5") or info.get("checksum") or fs.ukey(inside)
    return f"{str(tag).strip(chr(34))}:{info.get('size')}"


def upload(files: list[Path], url: str, options: Mapping[str, Any]) -> None:
    """Put each of ``files`` under the prefix ``url`` (replacing what is there)."""
    fs, inside = filesystem(url, options)
    for file in files:
        fs.put_file(str(file), f"{inside.rstrip('/')}/{file.name}")
