"""Logs and outputs in object stores (S3 and anything S3-compatible, GCS, …) through fsspec.

A PATH or ``--out`` with a scheme (``s3://bucket/prefix``) is read and written with fsspec,
given the ``--storage-option KEY=VALUE`` options (``endpoint_url=http://…`` for an S3-compatible
store such as an OBS bucket). A log is fetched into a private temporary folder to be audited:
ctxtop reads files, and never writes beside the log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ctxtop.tui.commands.fleet.extra import need
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
    if inside.endswith(".jsonl"):
        _fetch_subagents(fs, inside.removesuffix(".jsonl") + "/subagents", target.with_suffix("") / "subagents")
    return str(target)


def _fetch_subagents(fs: Any, prefix: str, into: Path) -> None:
    try:
        names = [name for name in fs.find(prefix, detail=False) if name.rsplit("/", 1)[-1].startswith("agent-")]
    except Exception:  # noqa: BLE001 - none there, or not listable: the session is audited without them
        return
    for name in names:
        inner = Path(name[len(prefix):].lstrip("/"))
        if inner.is_absolute() or ".." in inner.parts:
            continue  # (a store's key names no place outside the folder)
        (into / inner).parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(name, str(into / inner))


def fingerprint(fs: Any, inside: str) -> str:
    """What the store says identifies an object's content (S3: the ETag), with its size."""
    info = fs.info(inside)
    tag = info.get("ETag") or info.get("etag") or info.get("md5") or info.get("checksum") or fs.ukey(inside)
    return f"{str(tag).strip(chr(34))}:{info.get('size')}"


def upload(files: list[Path], url: str, options: Mapping[str, Any]) -> None:
    """Put each of ``files`` under the prefix ``url`` (replacing what is there)."""
    fs, inside = filesystem(url, options)
    for file in files:
        fs.put_file(str(file), f"{inside.rstrip('/')}/{file.name}")
