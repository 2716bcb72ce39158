"""Write the forensics fixtures: small hand-made Claude Code sessions, one compaction each.

Provenance: written by this script (``python tests/data/forensics/make_fixtures.py``); each
session acts out one row of seed 001's failure taxonomy or one recovery verdict, in the shape
of Claude Code's transcript (the records ``tests/data/claude_compact.jsonl`` has). A test
checks that the committed files are what this script writes.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
MODEL = "claude-sonnet-4-5-20250929"


class Transcript:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0
        self.parent: str | None = None
        self.context = 2000
        self.compacted = False

    def _record(self, kind: str, **fields) -> None:
        self.count += 1
        uuid = f"00000000-0000-4000-8000-{self.count:012d}"
        record = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": "/repo", "sessionId": "forensics",
                  "version": "2.1.30", "type": kind, **fields, "uuid": uuid, "timestamp": f"2026-11-01T10:{self.count // 60:02d}:{self.count % 60:02d}.000Z"}
        self.lines.append(json.dumps(record, ensure_ascii=False))
        self.parent = uuid

    def user(self, text: str, **extra) -> None:
        self.context += len(text) // 3 + 1
        self._record("user", message={"role": "user", "content": text}, **extra)

    def _assistant(self, content: dict, usage: dict | None = None) -> None:
        written = self.context if self.compacted else 50
        self.compacted = False
        usage = usage or {"input_tokens": 5, "cache_creation_input_tokens": written,
                          "cache_read_input_tokens": self.context - written, "output_tokens": 20}
        self._record("assistant", message={"id": f"msg_{self.count}", "type": "message", "role": "assistant", "model": MODEL,
                                           "content": [content], "usage": usage})
        self.context += 25

    def say(self, text: str, usage: dict | None = None) -> None:
        self._assistant({"type": "text", "text": text}, usage)

    def call(self, name: str, arguments: dict, result: str, *, error: bool = False) -> None:
        tool_id = f"toolu_{self.count + 1:04d}"
        self._assistant({"type": "tool_use", "id": tool_id, "name": name, "input": arguments})
        content = {"type": "tool_result", "tool_use_id": tool_id, "content": result}
        if error:
            content["is_error"] = True
        self.context += len(result) // 3 + 1
        self._record("user", message={"role": "user", "content": [content]})

    def compact(self, summary: str, pre_tokens: int | None = None) -> None:
        pre = pre_tokens or self.context
        self.parent = None
        self._record("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False, level="info",
                     compactMetadata={"trigger": "auto", "preTokens": pre})
        self.context, self.compacted = 2000, True
        self.user("This session is being continued from a previous conversation that ran out of context. "
                  "The summary below covers the earlier portion of the conversation.\n\nSummary:\n" + summary,
                  isCompactSummary=True, isVisibleInTranscriptOnly=True)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def constraint_evaporation() -> Transcript:
    t = Transcript()
    t.user("Refactor the error handling. All public error codes must start with ERR_ and stay backward compatible.")
    t.call("Read", {"file_path": "/repo/src/errors/codes.py"}, "ERR_TIMEOUT = 1\nERR_DENIED = 2\n")
    t.say("The codes are in src/errors/codes.py; I will keep the ERR_ prefix.")
    t.compact("The user wants the error handling refactored following the project's error handling style. "
              "Next: continue the refactor.")
    t.say("Continuing the refactor.")
    return t


def coordinate_loss() -> Transcript:
    t = Transcript()
    t.user("Fix the session expiry bug in the login module.")
    t.call("Grep", {"pattern": "validate_session"}, "/repo/src/auth/login_handler.py:42: def validate_session(token):")
    t.call("Read", {"file_path": "/repo/src/auth/login_handler.py"}, "def validate_session(token):\n    return token.expiry > now()\n")
    t.say("The expiry check is in validate_session in /repo/src/auth/login_handler.py.")
    t.compact("Working on the session expiry bug in the login module. Next: find where sessions are validated.")
    t.call("Grep", {"pattern": "validate_session"}, "/repo/src/auth/login_handler.py:42: def validate_session(token):")
    t.call("Read", {"file_path": "/repo/src/auth/login_handler.py"}, "def validate_session(token):\n    return token.expiry > now()\n")
    return t


def decision_backtracking() -> Transcript:
    t = Transcript()
    t.user("Add time parsing to the scheduler.")
    t.say("We decided not to add python-dateutil because it bloats the deployment; times are parsed by hand.")
    t.say("缓存方案：放弃引入 Redis 缓存，改用进程内字典。")
    t.compact("Adding time parsing to the scheduler; a cache is needed for parsed times. Next: pick the parsing approach.")
    t.say("The simplest way is to add python-dateutil for the time parsing.")
    t.call("Bash", {"command": "pip install python-dateutil"}, "Successfully installed python-dateutil-2.9.0")
    t.say("缓存部分我们引入 Redis 缓存来存放解析结果。")
    return t


def tool_chain_break() -> Transcript:
    t = Transcript()
    t.user("Add ErrorCode.toLegacy() to src/errors/fallback.py and re-export it.")
    edit = {"file_path": "/repo/src/errors/fallback.py", "old_string": "class ErrorCode:", "new_string": "class ErrorCode:\n    def toLegacy(self): ..."}
    t.call("Edit", edit, "The file /repo/src/errors/fallback.py has been updated.")
    t.call("Bash", {"command": "pytest -q tests/test_errors.py"}, "3 passed")
    t.compact("Task: add the legacy compatibility layer. Pending: edit fallback.py to add ErrorCode.toLegacy(), then re-export it.")
    t.call("Edit", edit, "The file /repo/src/errors/fallback.py has been updated.")
    return t


def _recovery(order: list[str]) -> Transcript:
    t = Transcript()
    t.user("Migrate the config loader to TOML; keep notes as you go.")
    t.call("Write", {"file_path": "/repo/notes/handoff.md", "content": "Done: parser. Next: loader.py call sites."}, "File created successfully")
    t.call("Bash", {"command": "pytest -q"}, "12 passed")
    t.compact("Migrating the config loader to TOML. Notes are in notes/handoff.md.")
    steps = {
        "reread": lambda: t.call("Read", {"file_path": "/repo/notes/handoff.md"}, "Done: parser. Next: loader.py call sites."),
        "status": lambda: t.call("Bash", {"command": "git status --short"}, " M src/config/parser.py"),
        "tests": lambda: t.call("Bash", {"command": "cd /repo && pytest -q"}, "12 passed"),
        "edit": lambda: t.call("Edit", {"file_path": "/repo/src/config/loader.py", "old_string": "json", "new_string": "tomllib"},
                               "The file /repo/src/config/loader.py has been updated."),
    }
    for step in order:
        steps[step]()
    return t


def unsupported_claims() -> Transcript:
    t = Transcript()
    t.user("Please look at the refund flow; do not delete anything yet.")
    t.call("Read", {"file_path": "/repo/src/payments/refund.py"}, "class RefundManager:\n    def refund(self, order): ...\n")
    t.user("Yes, go ahead and rename the config loader.")
    t.compact("The user approved renaming the config loader. The user approved deleting the legacy refund module. "
              "Continue in src/payments/refund_v2.py using RefundManagerV2.")
    t.say("Continuing with the refund module.")
    return t


def cache_cost() -> Transcript:
    t = Transcript()
    t.user("Summarize the incident reports.")
    t.call("Read", {"file_path": "/repo/reports/incidents.md"}, "incident 1\nincident 2\n")
    t.compact("Task: Summarize the incident reports. Progress: the reports are read.", pre_tokens=50_000)
    # Known cache figures on the first call after the compaction: 12,000 written (2,000 for 5 minutes,
    # 10,000 for an hour), 3,000 read.
    t.say("Continuing.", usage={"input_tokens": 5, "cache_creation_input_tokens": 12_000, "cache_read_input_tokens": 3_000,
                                "output_tokens": 10, "cache_creation": {"ephemeral_5m_input_tokens": 2_000,
                                                                        "ephemeral_1h_input_tokens": 10_000}})
    return t


FIXTURES = {
    "constraint_evaporation.jsonl": constraint_evaporation,
    "coordinate_loss.jsonl": coordinate_loss,
    "decision_backtracking.jsonl": decision_backtracking,
    "tool_chain_break.jsonl": tool_chain_break,
    "recovery_verified.jsonl": lambda: _recovery(["reread", "status", "tests", "edit"]),
    "recovery_partial.jsonl": lambda: _recovery(["reread", "edit"]),
    "recovery_none.jsonl": lambda: _recovery(["edit", "reread", "status"]),
    "unsupported_claims.jsonl": unsupported_claims,
    "cache_cost.jsonl": cache_cost,
}


def main() -> None:
    for name, build in FIXTURES.items():
        (HERE / name).write_text(build().text(), encoding="utf-8")


if __name__ == "__main__":
    main()
