"""The ``ctxtop`` command line: the TUI by default, and headless commands for scripts and CI."""

from __future__ import annotations

import argparse
import functools
import gc
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from ctxtop.context.output.compaction import render_compaction_markdown
from ctxtop.context.output.forensics_text import forensics_summary
from ctxtop.context.output.json_document import json_document
from ctxtop.context.output.markdown import render_markdown
from ctxtop.context.output.redact import redact, redact_text_if
from ctxtop.context.rules.selection import RuleRequest
from ctxtop.context.sanitize import clean_text, one_line
from ctxtop.context.second_core import cores_available
from ctxtop.context.store.source import SourceError, check_log, split_sample
from ctxtop.context.strategies import STRATEGIES, preview_all
from ctxtop.context.strategies.report import (
    STRATEGY_TABLE_HEADER,
    preview_dict,
    session_frame,
    strategy_rows,
)
from ctxtop.context.tracker import Tracker
from ctxtop.context.window.session import Session, resolved_message
from ctxtop.context.window.subagents import find_subagent
from ctxtop.context.window.tokens import DEFAULT_ENCODING
from ctxtop.parsers.registry import PARSERS
from ctxtop.tui.arguments import OnePinsFile, file_name, message_number, poll_seconds, positive_float, positive_int, rule_text, token_count
from ctxtop.tui.commands import fleet, install_hooks, replay_compaction
from ctxtop.tui.demo import DEMO_WINDOW, demo_path
from ctxtop.tui.discover import agent_session_roots, is_session_folder, resolve_session
from ctxtop.tui.entry import FAST_COMMANDS
from ctxtop.tui.entry import main as fast_main
from ctxtop.tui.errors import USER_ERRORS, UsageError, os_error_line, redact_messages, say
from ctxtop.tui.output import refuse_writing_over, write_output
from ctxtop.tui.progress_line import ProgressLine
from ctxtop.tui.waiting import not_written_yet, wait_for_session
from ctxtop.version import version

OUTPUT_FORMATS = {"json": "json", "md": "md", "markdown": "md", "html": "html"}
# The commands that read a log once run on one thread: their audit and rule detection can do half
# their work in a second process where there is a second core (context.second_core).
WHOLE_READ_PROCESSES = min(2, cores_available())


class Parser(argparse.ArgumentParser):
    """argparse that exits with code 2 and one line, as every ctxtop error does."""

    def error(self, message: str) -> None:  # type: ignore[override]
        say(f"{self.prog}: error: {message}")
        self.exit(2)


class VersionAction(argparse.Action):
    """``--version``: the version looked up only when asked for (``version()`` reads the installed
    package's metadata, about 20–30 ms that every other command would pay)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, default: str = argparse.SUPPRESS,
                 help: str = "show the program's version number and exit") -> None:  # noqa: A002 (argparse's name)
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(f"ctxtop {version()}\n")  # on stdout, as argparse's own version action
        parser.exit()


def _session_options(parser: argparse.ArgumentParser, *, path: bool = True, at: bool = True) -> None:
    """``at``: the command shows the session at one message (``check`` judges it all, ``watch`` follows its end)."""
    if path:
        parser.add_argument("path", nargs="?", help="session log file, or a directory (its newest session)")
        parser.add_argument("--demo", action="store_true", help="use the bundled demo session")
    if at:
        parser.add_argument("--at", type=message_number, metavar="N", help="message number (default: the latest; negative counts from the end)")
    parser.add_argument("--log-format", dest="log_format", metavar="NAME", choices=sorted(PARSERS), help="log format, instead of detecting it")
    parser.add_argument("--encoding", default=DEFAULT_ENCODING, metavar="NAME", help=f"tiktoken encoding (default {DEFAULT_ENCODING})")
    parser.add_argument("--window", type=token_count, metavar="TOKENS", help="context window size, instead of the model's")
    parser.add_argument("--pin", action="append", default=[], type=rule_text, metavar="TEXT", help="a constraint to track (repeatable)")
    parser.add_argument("--pins", type=file_name, action=OnePinsFile, metavar="FILE", help="constraints to track, from a TOML pins file")
    parser.add_argument("--auto", action="store_true", help="also track auto-detected rules when pins are given")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    parser.add_argument("--redact", action="store_true", help="mask API keys, tokens, passwords, emails and phone numbers in the output")


def _strategy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strategy", action="append", default=[], metavar="NAME[:key=value,...]",
                        help="a strategy to preview (repeatable; default: every strategy)")
    parser.add_argument("--budget", type=token_count, metavar="TOKENS",
                        help="target size for size-driven strategies (default: half the current window)")


def _strategies_epilog() -> str:
    lines = ["strategies (parameters with their defaults):"]
    for strategy in STRATEGIES.values():
        lines.append(f"  {strategy.name:<21} {strategy.summary}")
        params = ", ".join(f"{p.name}={p.shown_default or _default_text(p.default)}" for p in strategy.params)
        lines.append(f"  {'':<21} {params}")
    lines.append("example: ctxtop preview --demo --at 203 --strategy clear_tool_results:keep=8,trigger=now")
    return "\n".join(lines)


def _default_text(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, tuple):
        return f"{value[0]}:{value[1]}"
    if isinstance(value, list):
        return "|".join(value) or "-"
    return str(value)


def build_parser() -> dict[str, argparse.ArgumentParser]:
    parsers: dict[str, argparse.ArgumentParser] = {}

    tui = Parser(prog="ctxtop", description="htop for an AI agent's context window.", epilog=_commands_epilog(),
                 formatter_class=argparse.RawDescriptionHelpFormatter)  # the commands list keeps its lines
    tui.add_argument("--version", action=VersionAction)
    _session_options(tui)
    tui.add_argument("--format", dest="log_format_alias", metavar="NAME", choices=sorted(PARSERS), help="same as --log-format")
    tui.add_argument("--stay", action="store_true", help="with a directory (or no PATH), stay on the session opened when a newer one appears")
    tui.add_argument("--poll", type=poll_seconds, metavar="SECONDS", help="poll the log every SECONDS instead of file events (network filesystems)")
    parsers["open"] = tui

    demo = Parser(prog="ctxtop demo", description="Open the bundled demo session (seed 000's incident), replayed as if live.")
    _session_options(demo, path=False)
    demo.add_argument("--speed", type=positive_float, metavar="X", help="replay X times faster (the whole session takes about 20 s at 1)")
    demo.add_argument("--no-replay", action="store_true", help="open the demo at its end instead of replaying it")
    parsers["demo"] = demo

    export = Parser(prog="ctxtop export", description="Write a breakdown snapshot of the window as JSON or Markdown, or the HTML report.")
    _session_options(export)
    export.add_argument(
        "--format",
        dest="format",
        metavar="json|md|html|LOG_FORMAT",
        help="output format json (default), md, or html (a self-contained report); a log format name here is taken as --log-format",
    )
    export.add_argument("-o", "--output", type=file_name, metavar="FILE", help="write to FILE atomically (default: stdout)")
    export.add_argument("--strategies", action="store_true",
                        help="include strategy previews (all, or those given with --strategy; --strategy or --budget implies it)")
    export.add_argument("--compaction", type=positive_int, metavar="K",
                        help="export what the K-th compaction did instead: before and after, rules, facts lost, later violations")
    export.add_argument("--subagent", metavar="ID", help="export the sub-agent ID of the session (its agent-ID.jsonl) instead")
    _strategy_options(export)
    parsers["export"] = export

    preview = Parser(
        prog="ctxtop preview",
        description="What each compaction strategy would drop, keep and summarize in the window, side by side.",
        epilog=_strategies_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _session_options(preview)
    _strategy_options(preview)
    preview.add_argument("--json", action="store_true", help="print the full previews as JSON (the snapshot's strategies section)")
    parsers["preview"] = preview

    check = Parser(
        prog="ctxtop check",
        description="CI gate: exit 0 when every constraint survives every compaction and nothing forbidden was done, 1 otherwise.",
    )
    _session_options(check, at=False)
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
    replay_compaction.summarizer_options(check, required=False)
    parsers["check"] = check
    # (--compaction K names the window replayed: a message number there would be taken and ignored)
    parsers["replay-compaction"] = replay_compaction.build(Parser, functools.partial(_session_options, at=False))

    watch = Parser(
        prog="ctxtop watch",
        description="Follow a running agent's log headless: one line per update and one per alert (for tmux, status bars, scripts).",
    )
    _session_options(watch, at=False)
    watch.add_argument("--json", action="store_true", help="JSON lines instead of text")
    watch.add_argument("--poll", type=poll_seconds, metavar="SECONDS", help="poll every SECONDS instead of file events (network filesystems)")
    watch.add_argument("--stay", action="store_true", help="with a directory, stay on the session followed when a newer one appears")
    parsers["watch"] = watch

    parsers["install-hooks"] = install_hooks.build(Parser)
    parsers["audit"] = fleet.build(Parser, positive_int)

    formats = Parser(prog="ctxtop formats", description="List the log formats ctxtop reads and where agents keep them.")
    parsers["formats"] = formats
    return parsers


def _commands_epilog() -> str:
    return (
        "commands:\n"
        "  ctxtop [PATH]            open the TUI on a session log (a directory: its newest;\n"
        "                           none: the newest under ~/.claude/projects and ~/.codex/sessions)\n"
        "  ctxtop demo              the bundled demo session, replayed as if live\n"
        "  ctxtop export PATH       snapshot of the window as JSON, Markdown or HTML\n"
        "  ctxtop check PATH        CI gate: did every constraint survive every compaction?\n"
        "  ctxtop preview PATH      what each compaction strategy would drop, side by side\n"
        "  ctxtop watch PATH        follow a running agent's log headless, a line per update\n"
        "  ctxtop replay-compaction PATH --compaction K --summarizer CMD   audit your summarizer on a real compaction\n"
        "  ctxtop audit PATH… --out DIR   audit many sessions into Parquet tables and a report\n"
        "  ctxtop formats           list supported log formats\n"
        "  ctxtop install-hooks     guard a running Claude Code agent: hooks and status line in its settings\n"
        "  ctxtop hook / statusline what those hooks run (a JSON payload on stdin)"
    )


def _session_source(args: argparse.Namespace) -> tuple[str, int | None, str | None]:
    """(log path, window override, log format) from the options; the demo brings its own window."""
    use_demo = getattr(args, "demo", False) or args.command == "demo"
    path = getattr(args, "path", None)
    if use_demo and path:
        raise UsageError("give either PATH or --demo, not both")
    if not use_demo and not path:
        raise UsageError("no session given: pass a PATH, or --demo for the bundled demo session")
    window = args.window or (DEMO_WINDOW if use_demo else None)
    log_format = _one_log_format(args.log_format, getattr(args, "log_format_alias", None))
    return str(demo_path()) if use_demo else str(path), window, log_format


def _one_log_format(log_format: str | None, as_format: str | None) -> str | None:
    """The log format named by ``--log-format`` or by ``--format`` (the TUI's alias; export's, when it names one);
    two different ones are an error, not one of them kept unsaid."""
    if log_format is not None and as_format is not None and log_format != as_format:
        raise UsageError(f"--format {as_format} and --log-format {log_format} name two log formats: give one")
    return log_format or as_format


def _rule_request(args: argparse.Namespace) -> RuleRequest:
    return RuleRequest(tuple(args.pin), args.pins, args.auto)


def _read_source(args: argparse.Namespace) -> tuple[str, int | None, str | None]:
    """As ``_session_source``, a directory standing for its newest session (said on stderr), for the
    commands that read a session once."""
    path, window, log_format = _session_source(args)
    if path != str(demo_path()):
        resolved, notice = resolve_session(path)
        if notice:
            say(f"ctxtop: {one_line(notice, 300)}")
        path = str(resolved)
    return path, window, log_format


def _open_tracker(args: argparse.Namespace) -> Tracker:
    """The session named by the options, read whole, with the rules the options ask for and their audit."""
    path, window, log_format = _read_source(args)
    tracker = _read_whole(path, args, log_format, window)
    session = tracker.session
    _tell(tracker)
    if session.message_count == 0 and not session.parser.sidechain.messages and _has_bytes(path):
        diagnostics = session.parser.diagnostics
        raise SourceError(f"{path}: no message could be read as {session.format} "
                          f"({diagnostics.malformed_lines} malformed line(s), {diagnostics.unknown_records} unknown record(s))")
    return tracker


def _open_subagent_tracker(args: argparse.Namespace) -> tuple[Tracker, str]:
    """The sub-agent ``--subagent`` names, of the session the options name, with the rules asked for; and that
    session's log (a folder given stands for it)."""
    path, window, log_format = _read_source(args)
    with ProgressLine() as line:
        parent = Session.open(path, format=log_format, encoding=args.encoding, window=window, progress=_reading(line, path))
    agent = find_subagent(parent, args.subagent)
    tracker = _read_whole(str(agent.path), args, "claude-code", window)
    _tell(tracker)
    return tracker, path


def _read_whole(path: str, args: argparse.Namespace, log_format: str | None, window: int | None) -> Tracker:
    """``Tracker.open`` on a whole log, saying how far the read has come on a terminal's stderr meanwhile."""
    with ProgressLine() as line:
        return Tracker.open(path, _rule_request(args), format=log_format, encoding=args.encoding, window=window,
                            processes=WHOLE_READ_PROCESSES, progress=_reading(line, path))


# The stages ``Session.open`` reports (``progress(stage, fraction)``), as the progress line says them.
_STAGE_WORDS = {"read": "reading", "parse": "parsing", "count": "counting"}


def _reading(line: ProgressLine, path: str) -> Callable[[str, float], None]:
    """A ``progress(stage, fraction)`` for opening the log at ``path`` that draws it on ``line``."""
    name = Path(path).name

    def progress(stage: str, fraction: float) -> None:
        if stage == "audit":  # (Tracker.open: the read is done)
            line.show(f"ctxtop: read {name}", tail="; finding its rules and auditing its compactions…", now=True)
        else:  # (a long name is cut, not the figure after it)
            line.show(f"ctxtop: {_STAGE_WORDS.get(stage, stage)} {name}", tail=f" {fraction:.0%}")

    return progress


def _has_bytes(path: str) -> bool:
    try:
        return Path(split_sample(path)[0]).stat().st_size > 0
    except OSError:
        return False


def _tell(tracker: Tracker) -> None:
    """What the user should hear about how the log was read (a damaged index or token cache rebuilt),
    on stderr: the output stays clean."""
    for warning in tracker.warnings:
        say(f"ctxtop: note: {one_line(warning, 300)}")


def run_export(args: argparse.Namespace) -> int:
    output_format = "json"
    if args.format:
        if args.format in OUTPUT_FORMATS:
            output_format = OUTPUT_FORMATS[args.format]
        elif args.format in PARSERS:
            args.log_format = _one_log_format(args.log_format, args.format)
        else:
            raise UsageError(f"--format must be json, md, html or a log format ({', '.join(sorted(PARSERS))}), not {args.format!r}")
    if args.subagent is not None:  # (its parent's log is read too, and never written over nor beside)
        tracker, parent = _open_subagent_tracker(args)
        read = [tracker.session.path, parent]
    else:
        tracker = _open_tracker(args)
        read = [tracker.session.path]
    refuse_writing_over(args.output, [log for log in read if log])
    _check_at(args.at, tracker.session)
    if output_format == "html":
        if args.compaction is not None:
            raise UsageError("--format html is the whole report, every compaction included: leave out --compaction")
        if unused := _previews_asked(args):  # (it holds none: they would be left out unsaid)
            raise UsageError(f"--format html is the report, which holds no strategy previews: leave out {', '.join(unused)}")
        write_output(tracker.report_html(args.at, redacted=args.redact), args.output)
        return 0
    if args.compaction is not None:
        # (The view is of the compaction, not of a message: what only a snapshot uses would be left out unsaid.)
        if unused := (["--at"] if args.at is not None else []) + _previews_asked(args):
            raise UsageError(f"--compaction {args.compaction} shows that compaction, not a snapshot: leave out {', '.join(unused)}")
        try:
            document = tracker.compaction_view(args.compaction)
        except IndexError as exc:
            raise UsageError(str(exc)) from None
        render: Callable[[dict[str, Any]], str] = render_compaction_markdown
    else:
        strategies = args.strategy if _previews_asked(args) else None  # (--strategy or --budget: previews asked for)
        document, render = tracker.snapshot(args.at, strategies=strategies, budget=args.budget), render_markdown
    if args.redact:
        document = redact(document)
    if output_format == "md":
        text = render(document)
    else:
        text = json_document(document)
    write_output(text, args.output)
    return 0


def _previews_asked(args: argparse.Namespace) -> list[str]:
    """The options of ``export`` given that ask for strategy previews, which only a snapshot holds."""
    return [name for name, given in (("--strategies", args.strategies), ("--strategy", bool(args.strategy)),
                                     ("--budget", args.budget is not None)) if given]


def _check_at(at: int | None, session: Session) -> None:
    """A message ``--at`` names that the session does not hold is a usage error, not the nearest one."""
    count = session.message_count
    if at is not None and resolved_message(at, count) is None:
        raise UsageError(f"--at {at}: the session has {count} message(s): 1 to {count}, or -1 to -{count} counted from the end")


def run_check(args: argparse.Namespace) -> int:
    tracker = _open_tracker(args)
    constraints, alerts = tracker.rules, tracker.alerts()
    findings = [a for a in alerts if a.fails]
    compactions = len(tracker.audit.compactions)
    replayed, replays = replay_compaction.check_lines(tracker, args) if args.summarizer else ([], [])
    failed = bool(findings or replayed)
    if args.json:
        report = {
            "constraints": [{"id": c.id, "text": c.text, "source": c.source, "cue": c.cue, "origin": c.origin,
                             "first_stated": c.first_stated} for c in constraints],
            "auto_detected": tracker.auto_detects,
            "compactions": compactions,
            "findings": [a.as_dict() for a in findings],
            "notes": [a.as_dict() for a in alerts if not a.fails],
            "forensics": [{"compaction": c.event.message, **c.forensics} for c in tracker.audit.compactions],
            "ok": not failed,
        }
        if args.summarizer:
            report["summarizer"] = replays
        if args.redact:
            report = redact(report)
        write_output(json_document(report), None)
        return 1 if failed else 0
    lines = []
    if not constraints:
        lines.append("no rule to check: none was pinned and none was found in the session (pin one with --pin/--pins)")
    elif tracker.auto_detects:
        lines.append(f"checking {len(constraints)} rule(s), auto-detected unless pinned (pin your own with --pin/--pins)")
    for constraint in constraints:
        lines.append(f"  [{one_line(constraint.id, 40)}] {one_line(constraint.text, 100)}")
    for alert in alerts:
        where = f"compaction at message {alert.compaction}" if alert.compaction else f"message {alert.message}"
        label = "FAIL" if alert.fails else "note"
        lines.append(f"{label} {where}: {alert.kind} [{one_line(alert.constraint or '-', 40)}] {one_line(alert.detail, 200)}")
    lines += [line for c in tracker.audit.compactions for line in forensics_summary(c.event.message, c.forensics)]
    lines += replayed
    if failed:
        lines.append(f"{len(findings) + len(replayed)} finding(s) over {compactions} compaction(s)")
    elif constraints and compactions:
        lines.append(f"ok: every rule survived {compactions} compaction(s) and none was broken")
    elif constraints:
        lines.append(f"ok: {len(constraints)} rule(s) tracked, none broken; the session has no compaction for them to survive")
    text = clean_text("\n".join(lines)) + "\n"  # rule ids and texts, details: log and pins text, never escape codes
    write_output(redact_text_if(text, args.redact), None)
    return 1 if failed else 0


def run_preview(args: argparse.Namespace) -> int:
    tracker = _open_tracker(args)
    session, constraints = tracker.session, tracker.rules
    _check_at(args.at, session)
    message = session.clamp(args.at)
    frame = session_frame(session, message, constraints, args.budget)
    previews = [preview_dict(frame, p) for p in preview_all(frame, args.strategy)]
    if args.redact:
        previews = redact(previews)
    if args.json:
        report = {"at": message, "messages": session.message_count, "budget": frame.budget,
                  "window_tokens": frame.total, "strategies": previews}
        write_output(json_document(report), None)
        return 0
    pinned = f"{len(constraints)} rule(s) in force" + (" (auto-detected unless pinned)" if tracker.auto_detects else "")
    lines = [
        f"at message {message} / {session.message_count}: {frame.total:,} visible tokens, budget {frame.budget:,}; {pinned}",
        "",
        *_aligned([STRATEGY_TABLE_HEADER, *strategy_rows(previews)]),
    ]
    write_output(clean_text("\n".join(lines)) + "\n", None)
    return 0


def _aligned(rows: list[list[str]]) -> list[str]:
    """Rows as columns padded to their widest cell; the last column is left ragged."""
    cells = [[one_line(str(c), 80) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]) - 1)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-1]]).rstrip() for row in cells]


def run_watch(args: argparse.Namespace) -> int:
    from ctxtop.tui.watch import SessionFolder, first_line_from_the_tail, follow_headless, print_record, session_record

    path, window, log_format = _session_source(args)
    resolved, notice = resolve_session(path, waiting=True)
    if notice:
        say(f"ctxtop: {one_line(notice, 300)}")
    log = split_sample(str(resolved))[0]
    in_folder = Path(log).is_dir() and not is_session_folder(Path(log))  # a folder with no session yet
    if in_folder or not_written_yet(log):
        what = f"a session in {path}" if in_folder else f"{resolved} to be written"
        say(f"ctxtop: waiting for {one_line(what, 200)} (Ctrl-C stops)")
        found = wait_for_session(log, every=args.poll)
        if found is not None and found != Path(log):  # the path became a folder, or a session came into it
            say(f"ctxtop: newest session in {one_line(path, 200)}: {one_line(found.name, 120)}")
            resolved = found
    of_folder = Path(path).is_dir() and not is_session_folder(Path(path))  # a folder of sessions, not one kept as a folder
    if of_folder and args.json:
        print_record(session_record(str(resolved)), as_json=True, redacted=args.redact)  # which file the records are of
    if not Path(resolved).is_dir():
        first_line_from_the_tail(str(split_sample(resolved)[0]), encoding=args.encoding, window=window, as_json=args.json, redacted=args.redact)

    def open_live(log_path: str) -> Tracker:
        return Tracker.open(log_path, _rule_request(args), format=log_format, encoding=args.encoding, window=window, live=True)

    tracker = open_live(str(resolved))
    _tell(tracker)
    # A folder of sessions (not one session kept as a folder): a newer one appearing there is followed.
    folder = SessionFolder(Path(path), args.stay, open_live) if of_folder else None
    return follow_headless(tracker, as_json=args.json, poll_seconds=args.poll, redacted=args.redact, folder=folder)


def run_formats(args: argparse.Namespace) -> int:
    lines = []
    for name, parser in PARSERS.items():
        lines.append(f"{name:<18} {parser.description}")
        for location in parser.locations:
            lines.append(f"{'':<18}   {location}")
    write_output("\n".join(lines) + "\n", None)
    return 0


def run_tui(args: argparse.Namespace) -> int:
    from ctxtop.tui.app import CtxtopApp  # Textual is imported only when a screen is needed

    is_demo = args.command == "demo" or args.demo
    notice = None
    session_dirs: list[Path] = []
    if is_demo or args.path:
        path, window, log_format = _session_source(args)
        if not is_demo:
            if Path(path).is_dir() and not is_session_folder(Path(path)):
                session_dirs = [Path(path)]
            resolved, notice = resolve_session(path, waiting=True)  # (a folder with no session yet: the screen waits in it)
            path = str(resolved)
    else:
        resolved, notice = resolve_session(None)
        session_dirs = [root for root in agent_session_roots() if root.is_dir()]
        path, window, log_format = str(resolved), args.window, _one_log_format(args.log_format, args.log_format_alias)
    # Fail before the screen opens on a path that cannot be read at all; one not written yet is waited for.
    if not Path(path).is_dir() and not not_written_yet(split_sample(path)[0]):
        check_log(split_sample(path)[0])
    replay = None
    if is_demo and not getattr(args, "no_replay", False) and args.at is None:
        replay = getattr(args, "speed", None) or 1.0
    app = CtxtopApp(
        path=path,
        log_format=log_format,
        encoding=args.encoding,
        window=window,
        at=args.at,
        title="demo" if is_demo else None,
        pins=args.pin,
        pins_file=args.pins,
        auto=args.auto,
        replay_speed=replay,
        notice=notice,
        poll_seconds=getattr(args, "poll", None),
        session_dirs=session_dirs,
        stay=getattr(args, "stay", False),
        redacting=args.redact,
    )
    app.show_tracebacks = args.debug
    app.run()
    if app.load_error is not None:
        say(f"ctxtop: error: {app.load_error}")
    if args.debug:
        for error in app.worker_errors:
            traceback.print_exception(error)
    return app.return_code or (2 if app.worker_errors else 0)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "open": run_tui,
    "demo": run_tui,
    "export": run_export,
    "check": run_check,
    "preview": run_preview,
    "watch": run_watch,
    "formats": run_formats,
    "replay-compaction": replay_compaction.run,
    "install-hooks": install_hooks.run,
    "audit": fleet.run,
}


# The commands that read a session whole, once, and exit.
READ_ONCE_COMMANDS = frozenset({"export", "check", "preview", "replay-compaction"})


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """Python's cycle collector off for a command that reads a session once. Each of its full passes
    walks every object alive: the millions of entries, blocks and counts of a big session, none in a
    reference cycle (a 200 MB export leaves about 1,400 objects in cycles, 20 ms to collect at its end).
    Its passes cost a cold export of 200 MB about 7% of its time, and touch every object's header in the
    audit's forks too, copying the pages they share with this process."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in FAST_COMMANDS:
        return fast_main(argv)  # `ctxtop hook`, `ctxtop statusline`: never the TUI
    command = argv[0] if argv and argv[0] in COMMANDS and argv[0] != "open" else "open"
    if command != "open":
        argv = argv[1:]
    parser = build_parser()[command]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed in one line
        return exc.code if isinstance(exc.code, int) else 2
    args.command = command
    redact_messages(bool(getattr(args, "redact", False)))
    try:
        with cycles_uncollected() if command in READ_ONCE_COMMANDS else nullcontext():
            return COMMANDS[command](args)
    except USER_ERRORS as exc:
        say(f"ctxtop: error: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`ctxtop export ... | head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # what the system refused (a folder that cannot be entered, a full disk): the user's to fix
        say(f"ctxtop: error: {os_error_line(exc)}")
        return 2
    except Exception as exc:  # a bug: say so in one line unless asked for the traceback
        if getattr(args, "debug", False):
            traceback.print_exc()
        else:
            say(f"ctxtop: internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        return 2


def entry_point() -> None:
    sys.exit(main())
