"""Realistic synthetic sessions of a given size, deterministic by seed (Claude Code or Codex format).

Written as the agents write them: compact JSON (no space after ``:`` or
``,``), non-ASCII unescaped, one record a line. Tool results of varied sizes
capped as the agents cap what reaches the model (Claude Code's Bash output at
30,000 characters; Codex's at about 10 KB), screenshots as inline base64 PNGs
(the multi-MB lines), thinking, progress noise, and compactions with the real
summary preamble. Varied text (not one line repeated) so the token cache does
not make counting free.

The usage the records report follows what they hold, as a model's would: about
20,000 tokens of system prompt and tools (never logged), plus every message so
far, counted at a rate calibrated once with ``cl100k_base`` on the generator's
own text. The window stays under the model's limit: Claude Code compacts near
167,000 tokens of a 200,000 window (the real session in the shared fixtures
compacted at 167,094), Codex near 90% of its 272,000.

Claude Code records carry what real ones do beside the message (cwd, version,
git branch; a tool result's output again in ``toolUseResult``), and progress
records are about 2 KB, as in the heavy sessions reported upstream (a 50 MB
session held 11,329 progress records = 23.7 MB; a 102 MB one had 8,366 lines:
docs/peers.md). The bench prints the entry count, since memory follows entries
more than bytes.

    python bench/generate.py --format claude-code --mb 100 --seed 1 -o /tmp/session.jsonl
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import random
import string
import struct
import uuid
import zlib
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



# Claude Code: the system prompt and tool schemas sent before the conversation (never logged),
# the window, and where auto-compaction fires (the real fixture compacted at 167,094 of 200,000).
CLAUDE_PREFIX_TOKENS = 20_000
CLAUDE_WINDOW = 200_000
CLAUDE_COMPACT_AT = 167_000
CLAUDE_TOOL_OUTPUT_CHARS = 30_000  # Bash output beyond this is truncated before the model sees it
# Codex: its window as its token_count records state it, and local compaction near 90% of it.
CODEX_PREFIX_TOKENS = 12_000
CODEX_WINDOW = 272_000
CODEX_COMPACT_AT = 244_000
CODEX_TOOL_OUTPUT_CHARS = 10_000  # Codex keeps about 10 KB (256 lines) of a command's output for the model

SUMMARY_PREAMBLE = ("This session is being continued from a previous conversation that ran out of context. "
                    "The summary below covers the earlier portion of the conversation.\n\n")
SUMMARY_CLOSING = ("\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content "
                   "you generated), read the full transcript at: /home/dev/.claude/projects/-home-dev-projects-orders-service/{session}.jsonl\n"
                   "Please continue the conversation from where we left off without asking the user any further questions. "
                   "Continue with the last task that you were asked to work on.")


def dumps(record: dict) -> str:
    """One log line as the agents write it: compact separators, non-ASCII as is."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _rules_message(rng: random.Random) -> str:
    return "Project rules (CLAUDE.md):\n" + "\n".join(f"- {rule}" for rule in RULES) + "\n\n" + _text(rng, 20)


def _summary_body(rng: random.Random, words: int) -> str:
    """A compaction summary that keeps some of the rules, as real ones do (and drops the rest)."""
    kept = [rule for rule in RULES if rng.random() < 0.6]
    sections = [f"{n}. **{_text(rng, 3)}**: {_text(rng, words // 8)}" for n in range(1, 9)]
    return "Analysis:\n" + " ".join(kept) + "\n\nSummary:\n" + "\n\n".join(sections)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) + (str(rng.randint(0, 9999)) if rng.random() < 0.2 else "") for _ in range(words))


def _tool_output(rng: random.Random, cap: int) -> str:
    """A command's output as the model sees it: most short, some long, none past the agent's cap."""
    roll = rng.random()
    size = cap if roll < 0.02 else rng.randint(2000, 20000) if roll < 0.12 else rng.randint(50, 1500)
    lines, length = [], 0
    while length < min(size, cap):
        line = f"{rng.randint(1, 9999):>5}: {_text(rng, rng.randint(4, 14))}"
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)[:cap]


@functools.cache
def _chars_per_token() -> float:
    """The generator's text in characters per cl100k_base token, measured once on a sample of it."""
    from ctxtop.context.window.tokens import load_encoding

    rng = random.Random(0)
    sample = "\n".join(_tool_output(rng, CLAUDE_TOOL_OUTPUT_CHARS) for _ in range(200))
    return len(sample) / len(load_encoding("cl100k_base").encode_ordinary(sample))


def _tokens(*texts: str) -> int:
    """What the model counts for these texts (a few tokens of message framing each)."""
    return sum(round(len(text) / _chars_per_token()) + 4 for text in texts)


def _png(rng: random.Random, width: int, height: int, size: int) -> str:
    """Base64 of a PNG of that pixel size (a real header: ctxtop reads the size from it), ``size`` bytes long."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    ihdr = struct.pack(">I", len(header)) + b"IHDR" + header + struct.pack(">I", zlib.crc32(b"IHDR" + header))
    data = rng.randbytes(max(0, size - 33))
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + ihdr + data).decode("ascii")


def _image_tokens(width: int, height: int) -> int:
    scale = min(1.0, 1568 / max(width, height))
    return max(1, -(-int(width * scale * height * scale) // 750))


_BASE62 = string.digits + string.ascii_letters
_START = datetime(2026, 12, 3, tzinfo=timezone.utc)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _api_id(rng: random.Random, prefix: str) -> str:
    """An id shaped like the APIs' own (msg_01…, toolu_01…, call_…): as long, so as heavy to hold."""
    return prefix + "".join(rng.choice(_BASE62) for _ in range(24))


def _timestamp(n: int) -> str:
    return (_START + timedelta(seconds=n * 7)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def claude_code_lines(seed: int):
    rng = random.Random(seed)
    n, parent = 0, None
    prompt = CLAUDE_PREFIX_TOKENS  # what the next model call will be sent
    session = _uuid(rng)

    def record(kind: str, **fields) -> str:
        nonlocal n, parent
        n += 1
        uid = _uuid(rng)
        line = dumps({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/projects/orders-service",
                      "sessionId": session, "version": "2.0.42", "gitBranch": "main", "type": kind, **fields,
                      "uuid": uid, "timestamp": _timestamp(n)})
        parent = uid
        return line

    def compact_if_due():
        """Auto-compaction, as Claude Code does it before a call whose prompt is past the threshold."""
        nonlocal prompt
        if prompt > CLAUDE_COMPACT_AT:
            yield record("system", subtype="compact_boundary", content="Conversation compacted", level="info",
                         compactMetadata={"trigger": "auto", "preTokens": prompt})
            summary = SUMMARY_PREAMBLE + _summary_body(rng, 1600) + SUMMARY_CLOSING.format(session=session)
            yield record("user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={"role": "user", "content": summary})
            prompt = CLAUDE_PREFIX_TOKENS + _tokens(summary)

    def call_usage(output: int) -> dict:
        return {"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": prompt - 210, "output_tokens": output}

    turn = 0
    while True:
        turn += 1
        content = _rules_message(rng) if turn == 1 else _text(rng, rng.randint(5, 40))
        yield record("user", message={"role": "user", "content": content})
        prompt += _tokens(content)
        for step in range(rng.randint(1, 6)):
            if rng.random() < 0.3:  # progress noise: never reaches the model
                yield dumps({"type": "progress", "sessionId": session, "data": {"type": "bash_progress", "output": _text(rng, 260)}})
            yield from compact_if_due()
            message_id = _api_id(rng, "msg_01")
            thinking = _text(rng, 40) if rng.random() < 0.5 else None
            command = _text(rng, 6)
            output_tokens = _tokens(command) + (_tokens(thinking) if thinking else 0)
            usage = call_usage(output_tokens)  # one call: every line of its message reports the same usage
            if thinking:
                yield record("assistant", message={"id": message_id, "role": "assistant", "model": "claude-sonnet-4-5",
                                                    "content": [{"type": "thinking", "thinking": thinking, "signature": "x"}], "usage": usage})
            tool_id = _api_id(rng, "toolu_01")
            yield record("assistant", message={"id": message_id, "role": "assistant", "model": "claude-sonnet-4-5",
                                                "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}],
                                                "usage": usage})
            prompt += output_tokens
            if rng.random() < 0.001:  # a screenshot: the heaviest lines, a few MB of base64 for ~1,600 tokens
                width, height = rng.choice(((1920, 1080), (2560, 1440), (1280, 800)))
                image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                     "data": _png(rng, width, height, rng.randint(100_000, 1_500_000))}}
                yield record("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": [image]}]},
                             toolUseResult=[image])
                prompt += _image_tokens(width, height)
            else:
                output = _tool_output(rng, CLAUDE_TOOL_OUTPUT_CHARS)
                yield record("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]},
                             toolUseResult={"stdout": output, "stderr": "", "interrupted": False, "isImage": False})
                prompt += _tokens(output)
        yield from compact_if_due()
        answer = _text(rng, 30)
        yield record("assistant", message={"id": _api_id(rng, "msg_01"), "role": "assistant", "model": "claude-sonnet-4-5",
                                            "content": [{"type": "text", "text": answer}], "usage": call_usage(_tokens(answer))})
        prompt += _tokens(answer)


def codex_lines(seed: int):
    """A Codex rollout shaped like the real one in the shared fixtures (localpush, 46 user messages for
    365 tool calls): each turn is a user message (also echoed as an ``event_msg``) and a
    ``turn_context``, then several model calls — reasoning (an encrypted item and its summary), now and
    then a commentary message, a shell call and its output, a ``token_count`` — and a final answer."""
    rng = random.Random(seed)
    yield dumps({"timestamp": _timestamp(0), "type": "session_meta", "payload": {
        "id": _uuid(rng), "timestamp": _timestamp(0), "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.104.0",
        "source": "cli", "model_provider": "openai"}})
    prompt = CODEX_PREFIX_TOKENS
    spent = 0  # every input token billed so far (total_token_usage)
    n, turn = 0, 0
    turn_reasoning = 0  # the reasoning of the turn so far: in its later calls' prompts, dropped at the next user message

    def line(kind: str, payload: dict) -> str:
        return dumps({"timestamp": _timestamp(n), "type": kind, "payload": payload})

    def model_call(output_tokens: int, reasoning_tokens: int) -> str:
        """The usage of the call that wrote what came before it (then its output is part of the prompt)."""
        nonlocal spent
        spent += prompt
        return line("event_msg", {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": prompt, "cached_input_tokens": prompt - prompt % 1024, "output_tokens": output_tokens,
                                 "reasoning_output_tokens": reasoning_tokens, "total_tokens": prompt + output_tokens},
            "total_token_usage": {"input_tokens": spent}, "model_context_window": CODEX_WINDOW},
            "rate_limits": {"primary": {"used_percent": 13.0, "window_minutes": 300, "resets_at": 1771864834}}})

    while True:
        turn += 1
        n += 1
        request = _rules_message(rng) if turn == 1 else _text(rng, rng.randint(5, 40))
        prompt, turn_reasoning = prompt - turn_reasoning, 0  # the Responses API drops the earlier turns' reasoning
        yield line("event_msg", {"type": "user_message", "message": request, "images": []})
        yield line("turn_context", {"cwd": "/w", "approval_policy": "on-request", "model": "gpt-5-codex", "effort": "high",
                                    "sandbox_policy": {"type": "workspace-write", "network_access": False}, "summary": "auto"})
        yield line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": request}]})
        prompt += _tokens(request)
        for _step in range(rng.randint(2, 14)):
            n += 1
            summary = _text(rng, rng.randint(8, 30))
            reasoning_tokens = _tokens(summary) + rng.randint(50, 600)  # the encrypted part is most of it
            yield line("event_msg", {"type": "agent_reasoning", "text": summary})
            yield line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}], "content": None,
                                         "encrypted_content": "gAAAAA" + "".join(rng.choice(_BASE62) for _ in range(reasoning_tokens * 3))})
            output_tokens = reasoning_tokens
            if rng.random() < 0.4:  # a word to the user between calls
                commentary = _text(rng, rng.randint(10, 40))
                yield line("event_msg", {"type": "agent_message", "message": commentary})
                yield line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": commentary}]})
                output_tokens += _tokens(commentary)
            call_id = _api_id(rng, "call_")
            arguments = json.dumps({"cmd": _text(rng, 5), "workdir": "/w"}, ensure_ascii=False, separators=(",", ":"))
            yield line("response_item", {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": call_id})
            output_tokens += _tokens(arguments)
            yield model_call(output_tokens, reasoning_tokens)
            prompt += output_tokens
            turn_reasoning += reasoning_tokens
            output = _tool_output(rng, CODEX_TOOL_OUTPUT_CHARS)
            yield line("response_item", {"type": "function_call_output", "call_id": call_id, "output": output})
            prompt += _tokens(output)
            if prompt > CODEX_COMPACT_AT:  # local compaction, as Codex does near 90% of its window
                # Recent user messages, then the summary as a last user message (Codex's build_compacted_history).
                summary_text = _summary_body(rng, 1200)
                recent = _text(rng, 40)
                handoff = ("Another language model started to solve this problem and produced a summary "
                           "of its thinking process. Here is the summary:\n" + summary_text)
                replacement = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
                               for text in (recent, handoff)]
                yield line("compacted", {"message": summary_text, "replacement_history": replacement})
                yield line("event_msg", {"type": "context_compacted"})
                prompt, turn_reasoning = CODEX_PREFIX_TOKENS + _tokens(recent, handoff), 0
        n += 1
        answer = _text(rng, rng.randint(20, 120))
        yield line("event_msg", {"type": "agent_message", "message": answer})
        yield line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]})
        yield model_call(_tokens(answer), 0)
        prompt += _tokens(answer)
        yield line("event_msg", {"type": "task_complete", "last_agent_message": answer})


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
