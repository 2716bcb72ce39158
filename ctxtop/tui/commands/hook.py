"""``ctxtop hook`` and ``ctxtop statusline``: what Claude Code (and Codex) run, with a JSON payload on stdin.

Both start with few imports (``tui.entry`` sends them here without loading the
rest of the command line) and never break the agent's session: any error,
ours or the input's, is one line on stderr and exit 0, with nothing on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from typing import TextIO


class _BadOption(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse whose errors come back as one line (a hook's stderr is one note), not usage and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _BadOption(message)


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    # No abbreviations: a hook's command line is written once in a settings file and never seen again, and
    # `--pin "Never push to main"` taken as `--pins` read the rule as a file name (a pins file that is not there).
    parser = _Parser(prog=prog, description=description, allow_abbrev=False)
    parser.add_argument("--pins", metavar="FILE", help="also the rules of this TOML pins file")
    parser.add_argument("--no-auto", action="store_true", help="leave out the rules auto-detected in the transcript")
    parser.add_argument("--debug", action="store_true", help="a traceback on stderr for an internal error")
    return parser


def build_hook_parser() -> argparse.ArgumentParser:
    parser = _parser("ctxtop hook", "Answer a Claude Code (or Codex) hook: the payload on stdin, the answer on stdout. "
                                    "Rules in force: the session's saved pins, .ctxtop/pins.toml in cwd or above, --pins, "
                                    "and the transcript's auto-detected rules.")
    parser.add_argument("--ask", action="store_true", help="PreToolUse: ask the user instead of denying a call that breaks a rule")
    parser.add_argument("--stop-on-loss", action="store_true",
                        help="PostCompact (Codex): stop the agent when the compaction lost a rule (Codex cannot take context back in)")
    return parser


def build_statusline_parser() -> argparse.ArgumentParser:
    return _parser("ctxtop statusline", "One status line for Claude Code: window used, compactions so far, the rules' state.")


def _arguments(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(list(argv))
    except _BadOption as exc:
        return _fail(f"{parser.prog}: {exc} (see --help)")
    except SystemExit:  # --help, printed
        return 0


def _fail(note: str, consequence: str = "the agent goes on unguarded") -> int:
    """The guard must not break the session: a note, and exit 0 with nothing (more) on stdout."""
    from ctxtop.context.sanitize import one_line  # (light: the rest of the CLI is not loaded)

    _say(one_line(f"ctxtop: {note}; {consequence}"))
    return 0


def _internal(exc: BaseException, debug: bool, consequence: str = "the agent goes on unguarded") -> int:
    if debug:
        traceback.print_exc()
    from ctxtop.context.sanitize import one_line

    return _fail(f"internal error: {type(exc).__name__}: {one_line(str(exc), 200)}", consequence)


def _emit(text: str) -> bool:
    """Write to stdout as UTF-8 whatever the locale says (the agent reads UTF-8; a Latin-1 locale must not
    turn a ✔ or a Chinese rule into an error). Whether it was written: False when the agent no longer reads
    (Claude Code drops a status line a newer one replaced, and a hook past its time)."""
    try:
        stream = getattr(sys.stdout, "buffer", None)
        if stream is not None:
            sys.stdout.flush()
            stream.write(text.encode("utf-8", "surrogatepass"))
            stream.flush()
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except BrokenPipeError:
        _to_nowhere(sys.stdout)
        return False
    return True


def _say(line: str) -> None:
    """One line on stderr, and never anywhere else: with no stderr (closed: ``sys.stderr`` is None) ``print`` writes to
    stdout, where the agent reads the answer (a SessionStart's notes became the model's context, a denial after a
    note was no JSON); and a stderr nobody reads is no reason to fail (exit 1) or to withhold the answer."""
    if sys.stderr is None:
        return
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        _to_nowhere(sys.stderr)


def _to_nowhere(stream: TextIO) -> None:
    """Point ``stream`` at /dev/null, so that the flush at exit does not fail again on the broken pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):  # (a stream with no file descriptor: nothing is flushed to one at exit)
        pass
    finally:
        os.close(devnull)


def _read_payload() -> bytes:
    from ctxtop.context.guard.payload import MAX_PAYLOAD_BYTES

    return sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)  # no more than that is held: parse_payload refuses it


def run_hook(argv: Sequence[str]) -> int:
    args = _arguments(build_hook_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        from ctxtop.context.guard.hooks import answer
        from ctxtop.context.guard.payload import PayloadError, parse_payload
        from ctxtop.context.guard.rules import GuardOptions
        from ctxtop.context.rules.pins import PinsError
        from ctxtop.context.sanitize import one_line

        try:
            payload = parse_payload(_read_payload())
            result = answer(payload, GuardOptions(args.pins, not args.no_auto, args.ask, args.stop_on_loss))
        except (PayloadError, PinsError) as exc:
            return _fail(one_line(str(exc), 300))
        for note in result.notes:
            _say(f"ctxtop: note: {one_line(note, 300)}")
        if result.output is not None and not _emit(json.dumps(result.output, ensure_ascii=False) + "\n"):
            return _fail("the agent stopped reading before the answer was written", "it was not given")
        return 0
    except Exception as exc:  # a bug, or something the environment did: never the agent's problem
        return _internal(exc, args.debug)


def run_statusline(argv: Sequence[str]) -> int:
    args = _arguments(build_statusline_parser(), argv)
    if isinstance(args, int):
        return args
    try:
        from ctxtop.context.guard.payload import PayloadError, parse_payload
        from ctxtop.context.guard.rules import GuardOptions
        from ctxtop.context.guard.status import status
        from ctxtop.context.guard.transcript import UNREADABLE
        from ctxtop.context.rules.pins import PinsError
        from ctxtop.context.sanitize import one_line

        try:
            payload = parse_payload(_read_payload(), event_required=False)
            line = status(payload, GuardOptions(args.pins, not args.no_auto))
        except (PayloadError, PinsError, *UNREADABLE) as exc:
            _emit("ctx ?\n")  # the status line stays, saying it knows nothing
            return _fail(one_line(str(exc), 300), "no status")
        _emit(line + "\n")
        return 0
    except Exception as exc:
        _emit("ctx ?\n")  # a bug of ctxtop's own: the status line still says it knows nothing
        return _internal(exc, args.debug, "no status")
