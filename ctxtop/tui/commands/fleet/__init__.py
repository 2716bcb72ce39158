"""``ctxtop audit``: the audit of ``check --auto`` and the compaction forensics, over many sessions.

Sessions are found (``inputs``), digested, and those whose result an earlier run kept are
reused (``context/fleet/reuse``); the rest are audited by an engine (``engines``: worker
processes, or Dask) with the headless per-session function (``context/fleet/session``). The
rows go to Parquet (``tables``, DuckDB), the skipped files to ``skipped``, and a summary to
``report.md`` and ``report.html`` (``context/fleet/report``); an ``--out`` URL gets them
through fsspec (``storage``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxtop.context.output.redact import redact_text_if
from ctxtop.context.sanitize import one_line, shown_name
from ctxtop.context.window.tokens import DEFAULT_ENCODING, load_encoding
from ctxtop.parsers.registry import PARSERS
from ctxtop.tui.arguments import OnePinsFile, file_name, token_count
from ctxtop.tui.discover import agent_session_roots
from ctxtop.tui.errors import UsageError
from ctxtop.tui.progress_line import ProgressLine

if TYPE_CHECKING:
    from ctxtop.context.fleet.session import SessionAudit
    from ctxtop.tui.commands.fleet.inputs import Found

# The rest is imported when an audit runs: every other command starts without it (multiprocessing and
# the fleet's modules are some 20 ms of each start).

OUTPUTS = ("sessions.parquet", "compactions.parquet", "skipped", "report.md", "report.html")


def build(parser_type: type[argparse.ArgumentParser], positive_int: Callable[[str], int]) -> argparse.ArgumentParser:
    parser = parser_type(prog="ctxtop audit",
                         description="Audit many sessions as `check --auto` does, into tables a team can query "
                                     "(needs the fleet extra: pip install 'ctxtop[fleet]').")
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="session logs, folders (searched recursively) or URLs (s3://bucket/prefix); "
                             "default: ~/.claude/projects and ~/.codex/sessions")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder (or URL) for sessions.parquet, compactions.parquet, "
                                                                    "skipped, report.md and report.html")
    parser.add_argument("--jobs", type=positive_int, default=1, metavar="N", help="worker processes (default 1)")
    parser.add_argument("--engine", choices=("local", "dask"), default="local",
                        help="local worker processes (default), or a Dask cluster")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="with --engine dask: an existing cluster's scheduler (tcp://host:8786); "
                                                                "default: a local cluster of --jobs workers")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an fsspec option for URLs (repeatable), e.g. endpoint_url=http://127.0.0.1:9000")
    parser.add_argument("--pins", type=file_name, action=OnePinsFile, metavar="FILE",
                        help="constraints to track in every session, besides the detected ones (TOML)")
    parser.add_argument("--log-format", dest="log_format", metavar="NAME", choices=sorted(PARSERS), help="log format, instead of detecting it")
    parser.add_argument("--encoding", default=DEFAULT_ENCODING, metavar="NAME", help=f"tiktoken encoding (default {DEFAULT_ENCODING})")
    parser.add_argument("--window", type=token_count, metavar="TOKENS", help="context window size, instead of each model's")
    parser.add_argument("--no-reuse", action="store_true", help="audit every session again, even those an earlier run kept")
    parser.add_argument("--redact", action="store_true", help="mask API keys, tokens, passwords, emails and phone numbers in the output")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return parser


def run(args: argparse.Namespace) -> int:
    from ctxtop.context.fleet.reuse import ResultStore, Siblings, content_digest
    from ctxtop.context.fleet.session import NOT_OF_THE_LOG, AuditSettings, SessionAudit, skip_reason
    from ctxtop.context.rules.pins import load_pins
    from ctxtop.tui.commands.fleet.engines import dask_engine, lost_by_engine, run_local
    from ctxtop.tui.commands.fleet.extra import need
    from ctxtop.tui.commands.fleet.inputs import Found, find_sessions
    from ctxtop.tui.commands.fleet.storage import is_url, local_path, parse_options
    from ctxtop.tui.commands.fleet.worker import FETCH_FAILED, Task

    started = time.monotonic()
    need("duckdb")  # before any work: the tables cannot be written without it
    if args.scheduler is not None and args.engine != "dask":
        raise UsageError("--scheduler is for --engine dask")
    if args.scheduler is not None and not args.scheduler.strip():
        # (An empty address read as none started a local cluster instead: a script whose variable was unset ran elsewhere.)
        raise UsageError("--scheduler needs an address (tcp://host:8786)")
    if not args.out.strip():
        # (Read as a path, an empty --out — a script's variable unset — was the current folder, wherever that was.)
        raise UsageError("--out needs a folder (or a URL) for the outputs")
    if not is_url(args.out) and os.path.exists(local_path(args.out)) and not os.path.isdir(local_path(args.out)):
        # (Said now, not after every session was audited: mkdir's "File exists" then read as if the folder were there.)
        raise UsageError(f"--out {args.out}: not a folder")
    options = parse_options(args.storage_option)
    if args.pins:
        load_pins(args.pins)  # a bad pins file is one error now, not one skipped row per session
    settings = AuditSettings(pins_file=os.path.abspath(args.pins) if args.pins else None, encoding=args.encoding,
                             window=args.window, log_format=args.log_format)
    paths = args.paths or [str(root) for root in agent_session_roots() if root.is_dir()]
    if not paths:
        raise UsageError(f"no PATH given and none of {', '.join(str(r) for r in agent_session_roots())} exists")
    store = ResultStore(settings)
    results: list[SessionAudit] = []
    tasks: list[Task] = []
    digests: dict[str, str] = {}
    reused = 0
    siblings = Siblings()  # (a folder's 2.0 sub-agent transcripts listed, and each one's first line read, once)
    unreachable: list[Found] = []  # PATHs given that do not exist or cannot be listed: said, and the exit status 2
    for found in _unique(find_sessions(paths, options)):
        if found.named:
            unreachable.append(found)
        digest = found.fingerprint
        if found.problem is None and not found.url:
            try:
                digest = content_digest(found.name, siblings)
            except OSError as exc:
                found = Found(found.name, problem=skip_reason(f"cannot read it: {exc.strerror or exc}"))
        if found.problem is not None:
            results.append(SessionAudit(found.name, skipped=found.problem))
            continue
        assert digest is not None
        kept = None if args.no_reuse else store.get(digest, found.name)
        if kept is not None:
            results.append(kept)
            reused += 1
            continue
        digests[found.name] = digest
        tasks.append(Task(found.name, digest, settings, url=found.url, storage_options=options if found.url else {}))
    # An encoding that is unknown or not installed: one error before any log is read, as a bad pins file is.
    # Only when there is one to read: a run that reuses every result does not load the tokenizer (0.14 s).
    if tasks:
        load_encoding(args.encoding)
    engine = dask_engine(args.scheduler) if args.engine == "dask" else run_local
    with ProgressLine() as line:
        for done, result in enumerate(engine(tasks, args.jobs), 1):
            results.append(result)
            # Kept for reuse: what the log's own bytes decide, not a worker lost, a fetch failed, memory run out nor a bug of
            # ctxtop's (the next run retries).
            if result.path in digests and not lost_by_engine(result) and not (result.skipped or "").startswith((*NOT_OF_THE_LOG, FETCH_FAILED)):
                store.put(digests[result.path], result)
            line.show(f"ctxtop: audited {done:,} / {len(tasks):,}")
    if not results:
        raise UsageError(f"no session log found in {', '.join(one_line(p, 100) for p in paths)}")
    write_outputs(results, args.out, options, reused, redacting=args.redact)
    audited = sum(1 for r in results if r.row is not None)
    skipped = len(results) - audited
    # Names on stderr masked as `skipped` masks them: a CI job's log is shared as its tables are.
    said = partial(redact_text_if, redacting=args.redact)
    print(f"ctxtop: {audited:,} session(s) audited, {skipped:,} skipped; {reused:,} result(s) reused from an earlier run, "
          f"{len(tasks):,} read anew; {time.monotonic() - started:.1f} s → {said(one_line(args.out, 200))}", file=sys.stderr)
    for found in unreachable:
        print(f"ctxtop: error: {said(shown_name(found.name))}: {said(skip_reason(found.problem or ''))}", file=sys.stderr)
    return 2 if unreachable else 0


def _unique(found: Any) -> list[Found]:
    seen: dict[str, Found] = {}
    for item in found:
        key = item.name if item.url else os.path.realpath(item.name)
        seen.setdefault(key, item)
    return list(seen.values())


def write_outputs(results: list[SessionAudit], out: str, options: dict[str, Any], reused: int, *,
                  redacting: bool = False) -> None:
    """The five outputs into ``out`` (a folder, made if need be, or a URL), each replaced whole; ``redacting``
    (``--redact``): with secrets and personal data masked in every text of them, as export and check mask theirs."""
    from ctxtop.context.fleet.columns import COMPACTION_COLUMNS, NOT_LOG_TEXT, SESSION_COLUMNS
    from ctxtop.context.fleet.report import render_html, render_markdown, summarize
    from ctxtop.context.output.redact import redact, redact_text
    from ctxtop.tui.commands.fleet.storage import is_url, local_path, upload
    from ctxtop.tui.commands.fleet.tables import write_parquet

    results = sorted(results, key=lambda r: r.path)
    sessions = [r.row for r in results if r.row is not None]
    compactions = [c for r in results if r.row is not None for c in r.compactions]
    skipped = [(shown_name(r.path), shown_name(r.skipped or "")) for r in results if r.row is None]
    if redacting:
        # Masked as they are written, not as they are audited: the results kept for reuse stay the log's, so that
        # one run with --redact and one without can each take them (and FLEET_VERSION need not tell them apart).
        sessions = [{**redact(row), **{name: row[name] for name in NOT_LOG_TEXT}} for row in sessions]
        compactions = redact(compactions)
        skipped = [(redact_text(path), redact_text(reason)) for path, reason in skipped]
    summary = summarize(sessions, compactions, skipped, reused)
    remote = is_url(out)
    target = None if remote else Path(local_path(out))
    if target is not None:
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    with tempfile.TemporaryDirectory(prefix="ctxtop-audit-", dir=target) as folder:
        staged = Path(folder)
        write_parquet(sessions, SESSION_COLUMNS, staged / "sessions.parquet")
        write_parquet(compactions, COMPACTION_COLUMNS, staged / "compactions.parquet")
        (staged / "skipped").write_text("".join(f"{one_line(path)}\t{one_line(reason)}\n" for path, reason in skipped), encoding="utf-8")
        (staged / "report.md").write_text(render_markdown(summary), encoding="utf-8")
        (staged / "report.html").write_text(render_html(summary), encoding="utf-8")
        files = [staged / name for name in OUTPUTS]
        if remote:
            try:
                upload(files, out, options)
            except Exception as exc:  # noqa: BLE001 - credentials, a missing bucket…: one line
                raise UsageError(f"cannot write {one_line(out, 200)}: {type(exc).__name__}: {one_line(str(exc), 200)}") from None
        else:
            assert target is not None
            for file in files:  # staged in the folder itself: each replaced atomically
                os.replace(file, target / file.name)
