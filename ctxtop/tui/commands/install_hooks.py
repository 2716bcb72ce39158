"""``ctxtop install-hooks``: put ctxtop's hooks and status line into Claude Code's settings (or take them out).

Adds ``SessionStart`` (matcher ``compact``), ``PreToolUse`` and ``PreCompact``
hooks running ``ctxtop hook``, and a status line running ``ctxtop
statusline``, to ``.claude/settings.json`` (``--scope project``),
``.claude/settings.local.json`` (``local``) or ``~/.claude/settings.json``
(``user``; ``$CLAUDE_CONFIG_DIR/settings.json`` when that is set, as Claude Code reads it). Every other setting and hook stays as it was; what is already
there is not added again; the file is backed up before it changes;
``--dry-run`` prints the change and writes nothing; ``--uninstall`` removes
exactly the entries that run ctxtop.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import json
import math
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ctxtop.context.sanitize import clean_text, one_line
from ctxtop.tui.arguments import command
from ctxtop.tui.discover import claude_config_dir
from ctxtop.tui.errors import UsageError
from ctxtop.tui.errors import say as say_line
from ctxtop.tui.output import write_output

SCOPES = {"project": Path(".claude") / "settings.json", "local": Path(".claude") / "settings.local.json"}
# Event → matcher: SessionStart only after a compaction; every tool call; every compaction (never blocked).
HOOK_EVENTS = {"SessionStart": "compact", "PreToolUse": "*", "PreCompact": "*"}
HOOK_TIMEOUT_SECONDS = 30  # a first read of a big transcript takes a few seconds; later calls, a fraction of one
# A command that runs ctxtop's hook or status line: "ctxtop hook", "/venv/bin/ctxtop hook", "python -m ctxtop statusline".
_OURS = re.compile(r"""(?:^|[\s/'"])ctxtop['"]?\s+(?:hook|statusline)(?:\s|$)""")


def build(parser_type: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = parser_type(prog="ctxtop install-hooks",
                         description="Add ctxtop's hooks (SessionStart after a compaction, PreToolUse, PreCompact) and its status line "
                                     "to Claude Code's settings; every other setting is kept, and the file is backed up first.")
    parser.add_argument("--scope", choices=["project", "local", "user"], default="project",
                        help="project: .claude/settings.json (shared); local: .claude/settings.local.json (yours); "
                             "user: ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json (every project)")
    parser.add_argument("--dry-run", action="store_true", help="print the change without writing it")
    parser.add_argument("--uninstall", action="store_true", help="remove what install-hooks added")
    parser.add_argument("--command", dest="ctxtop_command", type=command, metavar="CMD", help="how the agent runs ctxtop (default: this ctxtop's path)")
    parser.add_argument("--settings", metavar="FILE", help=argparse.SUPPRESS)  # another settings file (tests)
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return parser


def settings_path(scope: str, cwd: Path | None = None, home: Path | None = None) -> Path:
    if scope == "user":
        return claude_config_dir(home) / "settings.json"
    return (cwd or Path.cwd()) / SCOPES[scope]


def ctxtop_command() -> str:
    """This ctxtop, as a command a hook can run: the console script's absolute path when that is how it was
    started (a virtualenv's ctxtop need not be on the agent's PATH), this Python's ``-m ctxtop`` when started so,
    else ``ctxtop``."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "ctxtop":
        found = shutil.which(str(script)) or (str(script.resolve()) if script.exists() else None)
        if found:
            return shlex.quote(str(Path(found).absolute()))
    if script is not None and script.name == "__main__.py" and script.parent.name == "ctxtop" and sys.executable:
        # `python -m ctxtop`: the same interpreter, by its full path (a bare `ctxtop` may not be on the agent's PATH)
        return f"{shlex.quote(str(Path(sys.executable).absolute()))} -m ctxtop"
    return "ctxtop"


def is_ours(command: object, ctxtop: str | None = None) -> bool:
    """Whether a settings command runs ctxtop's hook or status line: by ctxtop's name, or (a wrapper script not named
    so) as ``--command`` spells it, so that a second install adds nothing and ``--uninstall`` finds it."""
    if not isinstance(command, str):
        return False
    return _OURS.search(command) is not None or (ctxtop is not None and command in (f"{ctxtop} hook", f"{ctxtop} statusline"))


def with_hooks(settings: dict[str, Any], ctxtop: str) -> tuple[dict[str, Any], list[str]]:
    """``settings`` with ctxtop's hooks and status line added where missing, and notes on what was left alone."""
    result = copy.deepcopy(settings)
    notes = []
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("the settings' 'hooks' is not an object: not changed")
    for event, matcher in HOOK_EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise UsageError(f"the settings' hooks.{event} is not a list: not changed")
        if any(is_ours(hook.get("command"), ctxtop) for hook in _hooks_in(groups)):
            continue
        groups.append({"matcher": matcher, "hooks": [{"type": "command", "command": f"{ctxtop} hook", "timeout": HOOK_TIMEOUT_SECONDS}]})
    status = result.get("statusLine")
    if status is None:
        result["statusLine"] = {"type": "command", "command": f"{ctxtop} statusline"}
    elif not (isinstance(status, dict) and is_ours(status.get("command"), ctxtop)):
        notes.append("a status line is already set; ctxtop's is not added (to use it: \"statusLine\": "
                     f"{{\"type\": \"command\", \"command\": \"{ctxtop} statusline\"}})")
    return result, notes


def without_hooks(settings: dict[str, Any], ctxtop: str | None = None) -> dict[str, Any]:
    """``settings`` with every hook and status line that runs ctxtop (or ``ctxtop``, the command ``--command`` gave)
    taken out (and what that leaves empty)."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    inner = [h for h in group["hooks"] if not (isinstance(h, dict) and is_ours(h.get("command"), ctxtop))]
                    if not inner and group["hooks"]:
                        continue  # a group that held only ctxtop's hook: ctxtop added it
                    group = {**group, "hooks": inner}
                kept.append(group)
            if kept or not groups:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks and settings["hooks"]:  # (an empty "hooks" the user wrote is theirs, not ours to take out)
            del result["hooks"]
    status = result.get("statusLine")
    if isinstance(status, dict) and is_ours(status.get("command"), ctxtop):
        del result["statusLine"]
    return result


def _hooks_in(groups: list) -> Iterator[dict]:
    """Each hook of an event's groups (a group, or its hooks, of another shape, left as they are, hold none of ctxtop's)."""
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            yield from (hook for hook in group["hooks"] if isinstance(hook, dict))


def our_hook_commands(settings: dict[str, Any]) -> set[str]:
    """The commands of ctxtop's hooks in ``settings`` (the status line is one of a kind: Claude Code shows one)."""
    hooks = settings.get("hooks")
    events = [groups for groups in hooks.values() if isinstance(groups, list)] if isinstance(hooks, dict) else []
    return {hook["command"] for groups in events for hook in _hooks_in(groups) if is_ours(hook.get("command"))}


def _also_in_other_scopes(scope: str, ours: set[str]) -> list[str]:
    """Notes on the other scopes whose settings run ctxtop's hooks by another command than ``ours``: Claude Code
    merges every scope and runs each distinct command, so the rules would be put back twice and each call judged twice
    (the same command in two scopes is run once)."""
    notes = []
    for other in ("project", "local", "user"):
        if other == scope:
            continue
        path = settings_path(other)
        try:
            theirs = our_hook_commands(read_settings(path)[0])
        except UsageError:
            continue  # (a file that cannot be read is not this command's to judge)
        if theirs - ours:
            notes.append(f"{path} ({other} scope) runs ctxtop's hooks too, by another command: Claude Code would run both; "
                         f"to keep only this one: ctxtop install-hooks --scope {other} --uninstall")
    return notes


def read_settings(path: Path) -> tuple[dict[str, Any], str | None]:
    """The settings in ``path`` and their text (None: no file yet). Raises UsageError for one that is not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    try:
        settings = json.loads(text, parse_constant=_not_json, parse_float=_finite) if text.strip() else {}
    except _TooLarge as exc:
        raise UsageError(f"{path}: {exc}; not changed") from None
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc}); not changed") from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply to read; not changed") from None
    if not isinstance(settings, dict):
        raise UsageError(f"{path}: not a JSON object; not changed")
    return settings, text


def _not_json(name: str) -> Any:
    # The stdlib reads NaN and Infinity, which JSON does not have: written back, Claude Code could not read the file.
    raise ValueError(f"{name} is not a JSON value")


class _TooLarge(ValueError):
    """A number the file holds that could not be written back as it is."""


def _finite(text: str) -> float:
    # 1e400 is JSON, but read as inf it would be written back as Infinity, which JSON is not (nor can Claude Code read it).
    value = float(text)
    if math.isinf(value):
        raise _TooLarge(f"the number {one_line(text, 40)} is too large to be written back as it is")
    return value


def render(settings: dict[str, Any], before: str | None = None) -> str:
    """The settings as JSON, laid out as the file ``before`` was (see ``_layout``), written so that every value comes
    back as it was: what the output would strip (C1 controls, bidi and zero-width characters — a right-to-left mark, an
    emoji's joiner) or could not encode (a lone surrogate) is written as a JSON escape instead of itself."""
    indent, end = _layout(before)
    text = json.dumps(settings, indent=indent, ensure_ascii=False) + end
    return "".join(character if character.isprintable() or character in "\n\t" or _kept(character) else _json_escape(character)
                   for character in text)


_FIRST_INDENTED_LINE = re.compile(r"\n([ \t]+)\S")


def _layout(text: str | None) -> tuple[str, str]:
    """The indentation of a level and the file's end that ``text`` uses, to write it back alike: a shared settings
    file rewritten in another layout is a diff of every line for its team, and an uninstall would not give it back as
    it was. Two spaces and a newline (as Claude Code writes its settings) for a new or empty file; two spaces for one
    on a single line."""
    if text is None or not text.strip():
        return "  ", "\n"
    indented = _FIRST_INDENTED_LINE.search(text)  # (the first line below the top object's brace: one level in)
    return (indented.group(1) if indented else "  "), ("\n" if text.endswith("\n") else "")


def _kept(character: str) -> bool:
    return not "\ud800" <= character <= "\udfff" and clean_text(character) == character


def _json_escape(character: str) -> str:
    code = ord(character)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 pair, as JSON spells a character beyond the first plane
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def run(args: argparse.Namespace, say: Callable[[str], None] | None = None) -> int:
    say = say or say_line
    path = Path(args.settings) if args.settings else settings_path(args.scope)
    settings, before = read_settings(path)
    notes: list[str] = []
    if args.uninstall:
        changed = without_hooks(settings, args.ctxtop_command)
    else:
        changed, notes = with_hooks(settings, args.ctxtop_command or ctxtop_command())
        if not args.settings:
            notes += _also_in_other_scopes(args.scope, our_hook_commands(changed))
    for note in notes:
        say(f"ctxtop: note: {note}")
    if changed == settings:
        say(f"ctxtop: {path}: nothing to change ({'no ctxtop hook in it' if args.uninstall else 'the hooks are already there'})")
        return 0
    after = render(changed, before)
    if args.dry_run:
        old = (before or "").splitlines(keepends=True)
        write_output("".join(difflib.unified_diff(old, after.splitlines(keepends=True), str(path), f"{path} (after)")), None)
        say(f"ctxtop: dry run: {path} not written")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    if before is not None:
        backup = path.with_name(f"{path.name}.ctxtop-backup-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            shutil.copy2(path, backup)
        except OSError as exc:
            raise UsageError(f"cannot back up {path}: {exc.strerror or exc}; not changed") from None
        say(f"ctxtop: backed up {path} to {backup.name}")
    write_output(after, str(path))
    if args.uninstall:
        say(f"ctxtop: removed ctxtop from {path}")
    else:
        ours = isinstance(changed.get("statusLine"), dict) and is_ours(changed["statusLine"].get("command"), args.ctxtop_command)
        say(f"ctxtop: added ctxtop hooks {'and status line ' if ours else ''}to {path}")
    return 0
