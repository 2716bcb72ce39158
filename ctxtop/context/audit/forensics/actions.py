"""What a tool call did, for the forensics: read, searched, changed, checked the workspace, ran the tests.

One small record per such call (other calls are not kept), collected in the audit's one
pass over the entries. ``subject`` is what the call was about: the file read or changed,
the pattern searched, the command run (cut to SUBJECT_CHARS).
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from typing import Any, NamedTuple

from ctxtop.context.audit.drift import NOT_JSON
from ctxtop.context.sanitize import cut

READ, SEARCH, CHANGE, STATE, VERIFY = "read", "search", "change", "state", "verify"
SUBJECT_CHARS = 160

_SHELL_TOOL = re.compile(r"bash|shell|exec|terminal|run_command|execute|local_shell", re.IGNORECASE)
_READ_TOOL = re.compile(r"^(?:read|view|cat|open)|read_file|open_file|view_file", re.IGNORECASE)
_SEARCH_TOOL = re.compile(r"grep|glob|search|find|list_dir|ls\b", re.IGNORECASE)
_CHANGE_TOOL = re.compile(r"edit|write|patch|replace|create|delete|remove|move|rename|insert", re.IGNORECASE)
# Calls that act on the world outside the workspace: a change too (it cannot be taken back).
_OUTBOUND_TOOL = re.compile(r"send|mail|post|publish|deploy|upload|notify|approve|pay|transfer|push|merge|submit", re.IGNORECASE)

_STATE_COMMAND = re.compile(r"^git\s+(?:status|diff|log|show|stash\s+list)\b")
_TEST_COMMAND = re.compile(
    r"^(?:python\d?\s+-m\s+)?(?:pytest|tox|nox|unittest)\b|^(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b"
    r"|^(?:go|cargo|dotnet|mix|deno)\s+test\b|^make\s+(?:test|check)\b|^(?:mvn|gradle|\./gradlew)\s+.*\btest\b|^ctest\b|^jest\b|^vitest\b")
_READ_COMMAND = re.compile(r"^(?:cat|head|tail|less|more|bat|nl|wc)\b|^sed\s+-n\b")
_SEARCH_COMMAND = re.compile(r"^(?:grep|egrep|rg|ag|ack|find|fd|ls|tree|locate|git\s+grep|git\s+ls-files)\b")
_CHANGE_COMMAND = re.compile(
    r"^(?:rm|mv|cp|mkdir|rmdir|touch|chmod|chown|ln|truncate|dd|patch|tee)\b|^sed\s+-i\b"
    r"|^git\s+(?:commit|push|reset|checkout|restore|rebase|merge|apply|am|clean|rm|mv|add|stash(?!\s+list))\b"
    r"|^(?:npm|pnpm|yarn|pip\d?|uv|cargo|go)\s+(?:install|add|remove|uninstall|publish|get)\b"
    r"|^(?:curl|wget|http)\b.*(?:-X\s*(?:POST|PUT|PATCH|DELETE)|--data|-d\s|--upload)|^(?:mail|sendmail|scp|rsync|kubectl|terraform|docker\s+push)\b")
_REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\s*(?!&|/dev/null)\S")  # writing a file with > or >>
_STEP = re.compile(r"&&|\|\||;")
_CHANGE_WORDS = frozenset("rm mv cp mkdir rmdir touch chmod chown ln truncate dd patch tee sed git npm pnpm yarn pip pip3 uv cargo go "
                          "curl wget http mail sendmail scp rsync kubectl terraform docker".split())
_TEST_WORDS = frozenset("python python3 pytest tox nox unittest npm pnpm yarn bun go cargo dotnet mix deno make mvn gradle ./gradlew "
                        "ctest jest vitest".split())
_READ_WORDS = frozenset("cat head tail less more bat nl wc sed".split())
_SEARCH_WORDS = frozenset("grep egrep rg ag ack find fd ls tree locate git".split())
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_ARG_KEYS = ("file_path", "path", "filename", "file", "notebook_path", "target_file", "absolute_path")
_PATTERN_KEYS = ("pattern", "query", "regex", "glob", "search", "name")
_COMMAND_KEYS = ("command", "cmd", "commands", "script")


@dataclass(slots=True)
class Action:
    message: int
    kind: str  # READ | SEARCH | CHANGE | STATE | VERIFY
    tool: str
    subject: str
    key: int  # the drift scan's key of the call: the same call made twice has the same key
    failed: bool = False  # its result came back as an error

    @property
    def label(self) -> str:
        return self.tool if self.subject == self.tool else f"{self.tool} {self.subject}"


def action_of(message: int, tool: str | None, text: str, key: int, data: Any) -> Action | None:
    """The action a tool call took, or None for calls the forensics do not follow. ``data``: ``input_data(text)``,
    decoded once by the caller for this and the drift scan's ``call_of``."""
    name = tool or "?"
    if data is NOT_JSON:
        data = text
    tool_kind = _tool_kind(name)
    if tool_kind.shell:
        command = _field(data, _COMMAND_KEYS) if isinstance(data, dict) else (data if isinstance(data, str) else None)
        if command is None and isinstance(data, list):
            command = " ".join(str(part) for part in data)
        return _command_action(message, name, command, key) if command else None
    if isinstance(data, dict) and data.get("command") in ("view", "create", "str_replace", "insert", "undo_edit"):
        # The str_replace_based_edit_tool family: one tool, the kind in its "command".
        kind = READ if data["command"] == "view" else CHANGE
        return Action(message, kind, name, _cut(_field(data, _ARG_KEYS) or name), key)
    path = _field(data, _ARG_KEYS) if isinstance(data, dict) else None
    if tool_kind.patch and isinstance(data, (str, dict)):
        patch = data if isinstance(data, str) else (_field(data, ("input", "patch")) or "")
        files = _PATCH_FILE.findall(patch)
        return Action(message, CHANGE, name, _cut(files[0] if files else path or name), key)
    if tool_kind.change:
        return Action(message, CHANGE, name, _cut(path or name), key)
    if tool_kind.read and path:
        return Action(message, READ, name, _cut(path), key)
    if tool_kind.search:
        pattern = _field(data, _PATTERN_KEYS) if isinstance(data, dict) else None
        return Action(message, SEARCH, name, _cut(pattern or path or name), key)
    if tool_kind.outbound:
        return Action(message, CHANGE, name, _cut(name), key)
    return None


class _ToolKind(NamedTuple):
    """What a tool's name says it does (``_tool_kind``)."""

    shell: bool
    patch: bool
    change: bool
    read: bool
    search: bool
    outbound: bool


@functools.lru_cache(maxsize=256)  # (asked at every call; a log's tools are a few dozen)
def _tool_kind(name: str) -> _ToolKind:
    return _ToolKind(shell=bool(_SHELL_TOOL.search(name)), patch="patch" in name.lower(), change=bool(_CHANGE_TOOL.search(name)),
                     read=bool(_READ_TOOL.search(name)), search=bool(_SEARCH_TOOL.search(name)),
                     outbound=bool(_OUTBOUND_TOOL.search(name)))


def _command_action(message: int, tool: str, command: str, key: int) -> Action | None:
    line = " ".join(command.split())
    # "cd repo && pytest": the steps after cd/export say what the command is for.
    steps = [s.strip() for s in _STEP.split(line)] if _STEP.search(line) else [line]
    steps = [s for s in steps if s and not s.startswith(("cd ", "export ", "source "))] or [line]
    first = steps[0]
    # Most commands are told apart by their first word; the regexes run only where it is one of theirs. (The words
    # are split once, and a command none of whose steps starts with one of theirs is not walked step by step.)
    words = [_first_word(step) for step in steps]
    if (">" in line or not _CHANGE_WORDS.isdisjoint(words)) and any(
            word in _CHANGE_WORDS and _CHANGE_COMMAND.search(step) or (">" in step and _REDIRECT.search(step))
            for step, word in zip(steps, words)):
        return Action(message, CHANGE, tool, _cut(line), key)
    if not _TEST_WORDS.isdisjoint(words) and any(word in _TEST_WORDS and _TEST_COMMAND.search(step) for step, word in zip(steps, words)):
        return Action(message, VERIFY, tool, _cut(line), key)
    word = words[0]
    if word == "git" and _STATE_COMMAND.search(first):
        return Action(message, STATE, tool, _cut(line), key)
    if word in _READ_WORDS and _READ_COMMAND.search(first):
        return Action(message, READ, tool, _cut(_last_argument(first) or line), key)
    if word in _SEARCH_WORDS and _SEARCH_COMMAND.search(first):
        return Action(message, SEARCH, tool, _cut(line), key)
    return None


def _first_word(step: str) -> str:
    return step.split(" ", 1)[0]


def _last_argument(command: str) -> str | None:
    try:
        words = shlex.split(command.split("|")[0])
    except ValueError:
        return None
    arguments = [w for w in words[1:] if not w.startswith("-") and not w.replace(",", "").isdigit()]
    return arguments[-1] if arguments else None


def _field(data: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def _cut(text: str) -> str:
    return cut(text, SUBJECT_CHARS)
