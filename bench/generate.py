"""Realistic synthetic sessions of a given size, deterministic by seed (Claude Code or Codex format).

Tool results of varied sizes (a few multi-MB), thinking, progress noise,
compactions every so often, and usage that grows like a real prompt. Varied
text (not one line repeated) so the token cache does not make counting free.

Claude Code records carry what real ones do beside the message (cwd, version,
git branch; a tool result's output again in ``toolUseResult``), and progress
records are about 2 KB, as in the heavy sessions reported upstream (a 50 MB
session held 11,329 progress records = 23.7 MB; a 102 MB one had 8,366 lines:
docs/peers.md). That makes about 6 KB per line; the bench prints the entry
count, since memory follows entries more than bytes.

    python bench/generate.py --format claude-code --mb 100 --seed 1 -o /tmp/session.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import string
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

# No word here states a rule ("budget", "only", "never"... would make each message a candidate):
# the rules are the RULES list, stated once at the start as an instructions file would.
WORDS = ("order invoice supplier ledger approve refund shipment warehouse quantity price total pending customer "
         "error retry timeout config deploy build test module function variable import return class async await "
         "数据 订单 审批 供应商 预算 库存 通知 客户 价格 合计").split()


# A project's instructions file (CLAUDE.md, AGENTS.md) of about 30 rules, as in the seeds' incident.
RULES = [
    "Budget cap 8000 USD per order: stop and ask above it.",
    "Never send email to suppliers; only use WeCom.",
    "Old error codes must keep working.",
    "Never push to main.",
    "Do not delete rows from the orders table.",
    "Always run the test suite before a commit.",
    "No more than 3 retries for a failed shipment call.",
    "Never store customer phone numbers in logs.",
    "Only deploy on Fridays after 3pm.",
    "The refund limit is 500 USD without approval.",
    "Do not change the public API of the invoice module.",
    "Always keep migrations reversible.",
    "Never disable the rate limiter.",
    "Do not add new dependencies without asking.",
    "Timeouts must stay at 30 seconds or less.",
    "Only the warehouse service may write stock levels.",
    "Never log supplier bank details.",
    "Always answer in the user's language.",
    "Do not edit generated files under build/.",
    "Max batch size is 200 orders.",
    "Never force-push a shared branch.",
    "Prices must be stored in cents, as integers.",
    "Do not call the payment API from tests.",
    "Always use UTC timestamps.",
    "At most 2 concurrent deploys.",
    "Never approve your own pull request.",
    "Config changes must go through review.",
    "Do not rename database columns in place.",
    "Only use the v2 supplier endpoint.",
    "不要在周末发布。",
]


def _rules_message(rng: random.Random) -> str:
    return "Project rules (CLAUDE.md):\n" + "\n".join(f"- {rule}" for rule in RULES) + "\n\n" + _text(rng, 20)


def _summary(rng: random.Random, words: int) -> str:
    """A compaction summary that keeps some of the rules, as real ones do (and drops the rest)."""
    kept = [rule for rule in RULES if rng.random() < 0.6]
    return "Summary:\n" + " ".join(kept) + "\n" + _text(rng, words)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) + (str(rng.randint(0, 9999)) if rng.random() < 0.2 else "") for _ in range(words))


def _tool_output(rng: random.Random) -> str:
    roll = rng.random()
    size = 3_000_000 if roll < 0.0005 else rng.randint(2000, 20000) if roll < 0.1 else rng.randint(50, 1500)
    lines, length = [], 0
    while length < size:
        line = f"{rng.randint(1, 9999):>5}: {_text(rng, rng.randint(4, 14))}"
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)


_BASE62 = string.digits + string.ascii_letters
_START = datetime(2026, 12, 3, tzinfo=timezone.utc)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _api_id(rng: random.Random, prefix: str) -> str:
    """An id shaped like the APIs' own (msg_01…, toolu_01…, call_…): as long, so as heavy to hold."""
    return prefix + "".join(rng.choice(_BASE62) for _ in range(24))


def _timestamp(n: int) -> str:
    return (_START + timedelta(seconds=n * 7)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Where each agent compacts (prompt tokens); bench/fleet.py lowers them for small sessions that compact.
CLAUDE_COMPACT_AT = 160_000
CODEX_COMPACT_AT = 240_000


def claude_code_lines(seed: int):
    rng = random.Random(seed)
    n, prompt, parent = 0, 4000, None
    session = _uuid(rng)

    def record(kind: str, **fields) -> str:
        nonlocal n, parent
        n += 1
        uid = _uuid(rng)
        line = json.dumps({"type": kind, "sessionId": session, "uuid": uid, "parentUuid": parent, "isSidechain": False,
                           "userType": "external", "cwd": "/home/dev/projects/orders-service", "version": "2.0.42",
                           "gitBranch": "main", "timestamp": _timestamp(n), **fields}, ensure_ascii=False)
        parent = uid
        return line + "\n"

    turn = 0
    while True:
        turn += 1
        content = _rules_message(rng) if turn == 1 else _text(rng, rng.randint(5, 40))
        yield record("user", message={"role": "user", "content": content})
        for step in range(rng.randint(1, 6)):
            if rng.random() < 0.3:  # progress noise: never reaches the model
                yield json.dumps({"type": "progress", "sessionId": session, "data": {"type": "bash_progress", "output": _text(rng, 260)}},
                                 ensure_ascii=False) + "\n"
            message_id = _api_id(rng, "msg_01")
            usage = {"input_tokens": 10, "cache_read_input_tokens": prompt, "cache_creation_input_tokens": 200, "output_tokens": 80}
            if rng.random() < 0.5:
                yield record("assistant", message={"id": message_id, "role": "assistant", "model": "claude-sonnet-4-5",
                                                    "content": [{"type": "thinking", "thinking": _text(rng, 40), "signature": "x"}], "usage": usage})
            tool_id = _api_id(rng, "toolu_01")
            yield record("assistant", message={"id": message_id, "role": "assistant", "model": "claude-sonnet-4-5",
                                                "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": _text(rng, 6)}}],
                                                "usage": usage})
            output = _tool_output(rng)
            yield record("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]},
                         toolUseResult={"stdout": output, "stderr": "", "interrupted": False, "isImage": False})
            prompt += len(output) // 4 + 150
        yield record("assistant", message={"id": _api_id(rng, "msg_01"), "role": "assistant", "model": "claude-sonnet-4-5",
                                            "content": [{"type": "text", "text": _text(rng, 30)}],
                                            "usage": {"input_tokens": 10, "cache_read_input_tokens": prompt, "output_tokens": 40}})
        if prompt > CLAUDE_COMPACT_AT:  # auto-compact, as Claude Code would
            yield record("system", subtype="compact_boundary", content="Conversation compacted",
                         compactMetadata={"trigger": "auto", "preTokens": prompt})
            yield record("user", isCompactSummary=True, message={"role": "user", "content": _summary(rng, 300)})
            prompt = 6000


def codex_lines(seed: int):
    rng = random.Random(seed)
    yield json.dumps({"timestamp": _timestamp(0), "type": "session_meta", "payload": {"id": _uuid(rng), "cwd": "/w"}}) + "\n"
    total = 4000
    n = 0
    while True:
        n += 1
        item = lambda payload: json.dumps({"timestamp": _timestamp(n), "type": "response_item", "payload": payload}) + "\n"  # noqa: E731
        call_id = _api_id(rng, "call_")
        yield item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": _rules_message(rng) if n == 1 else _text(rng, 20)}]})
        yield item({"type": "function_call", "name": "shell", "call_id": call_id, "arguments": json.dumps({"command": ["bash", "-lc", _text(rng, 5)]})})
        output = _tool_output(rng)
        yield item({"type": "function_call_output", "call_id": call_id, "output": output})
        total += len(output) // 4 + 100
        yield json.dumps({"timestamp": _timestamp(n), "type": "event_msg", "payload": {
            "type": "token_count", "info": {"last_token_usage": {"input_tokens": total, "output_tokens": 50},
                                            "total_token_usage": {"input_tokens": total * n}, "model_context_window": 272000}}}) + "\n"
        if total > CODEX_COMPACT_AT:  # local compaction, as Codex does near 90% of its window
            # Recent user messages, then the summary as a last user message (Codex's build_compacted_history).
            summary = _summary(rng, 200)
            replacement = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
                           for text in (_text(rng, 40), "Another language model started to solve this problem and produced a summary "
                                        "of its thinking process. Here is the summary:\n" + summary)]
            yield json.dumps({"timestamp": _timestamp(n), "type": "compacted",
                              "payload": {"message": summary, "replacement_history": replacement}}) + "\n"
            total = 5000


GENERATORS = {"claude-code": claude_code_lines, "codex": codex_lines}


def generate(path: Path, format: str, megabytes: float, seed: int = 1) -> int:
    """Write a session of about ``megabytes`` MB; returns its size in bytes."""
    source = GENERATORS[format](seed)
    with open(path, "w", encoding="utf-8") as handle:
        while handle.tell() < megabytes * 1_000_000:
            handle.write(next(source))
    return path.stat().st_size


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--format", choices=sorted(GENERATORS), default="claude-code")
    options.add_argument("--mb", type=float, default=10.0)
    options.add_argument("--seed", type=int, default=1)
    options.add_argument("-o", "--output", required=True)
    args = options.parse_args()
    size = generate(Path(args.output), args.format, args.mb, args.seed)
    print(f"{args.output}: {size / 1e6:.1f} MB of {args.format}")


if __name__ == "__main__":
    main()
