"""Benchmark: how long Claude Code waits for `ctxtop hook` and `ctxtop statusline` on a big transcript.

Targets (issue 21): PreToolUse under 300 ms and the status line under 200 ms on a
100 MB transcript, with the caches warm (ctxtop has seen the transcript once:
its session index and what the hooks keep). Each figure is a whole process, as
the agent runs it (Python's start-up included), and the transcript grows
between calls as a live one does: a tool call and its result are appended
before every PreToolUse and every status line. The session is cut just before
its last compaction: a PreCompact hook records the window, the compaction
boundary and its summary are appended (what the log holds when Claude Code
starts the session again), and SessionStart(compact) runs after it.

Python's bytecode is cached as an installed package has it (pip compiles it at
install; an editable install writes it at the first run), in the benchmark's
own folder (PYTHONPYCACHEPREFIX), also where the environment sets
PYTHONDONTWRITEBYTECODE: without it every call would compile ctxtop's sources
again, about 50 ms no user pays.

    python bench/hook_latency.py [--mb 100] [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from generate import generate  # noqa: E402
from installed import compile_ctxtop  # noqa: E402

TARGETS_MS = {"PreToolUse": 300.0, "statusline": 200.0, "SessionStart(compact)": 300.0}


def appended_call(n: int) -> bytes:
    """An assistant tool call and its result, as Claude Code writes them (about 2 KB)."""
    common = {"sessionId": "bench", "isSidechain": False, "userType": "external", "cwd": "/home/dev/projects/orders-service",
              "version": "2.0.42", "gitBranch": "main", "timestamp": "2026-12-03T12:00:00.000Z"}
    tool_id = f"toolu_bench{n:05d}"
    call = {**common, "type": "assistant", "uuid": f"b{n}a", "parentUuid": None,
            "message": {"id": f"msg_bench{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": f"make check {n}"}}],
                        "usage": {"input_tokens": 10, "cache_read_input_tokens": 90_000 + 300 * n, "output_tokens": 20}}}
    output = f"check {n} passed; " * 100
    result = {**common, "type": "user", "uuid": f"b{n}r", "parentUuid": f"b{n}a",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": output}]}}
    return (json.dumps(call) + "\n" + json.dumps(result) + "\n").encode()


def timed(command: list[str], payload: dict, env: dict) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True, env=env, cwd=ROOT, timeout=120)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0 or b"internal error" in done.stderr:
        raise SystemExit(f"{command[-1]} failed: {done.stderr.decode(errors='replace')}")
    return elapsed, done.stdout.decode()


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--mb", type=float, default=100.0)
    options.add_argument("--runs", type=int, default=15)
    options.add_argument("--keep", action="store_true", help="keep the transcript and caches (their folder is printed)")
    args = options.parse_args()
    compile_ctxtop()  # (timed as installed: see installed.py)
    directory = Path(tempfile.mkdtemp(prefix="ctxtop-hooks-"))
    try:
        measure(directory, args)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


def measure(directory: Path, args: argparse.Namespace) -> None:
    env = {**os.environ, "CTXTOP_CACHE_DIR": str(directory / "cache"), "CTXTOP_STATE_DIR": str(directory / "state"),
           "PYTHONPYCACHEPREFIX": str(directory / "bytecode")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    full = directory / "full.jsonl"
    generate(full, "claude-code", args.mb * 1.1)  # cut before its last compaction, about --mb are left
    data = full.read_bytes()
    # The generator writes compact JSON, as Claude Code does; spaces or not, the last boundary is the cut.
    boundaries = [found.start() for found in re.finditer(rb'"subtype":\s*"compact_boundary"', data)]
    if not boundaries:
        raise SystemExit("the generated session has no compaction: give a larger --mb")
    cut = data.rfind(b"\n", 0, boundaries[-1]) + 1

    transcript = directory / "session.jsonl"
    transcript.write_bytes(data[:cut])
    hook = [sys.executable, "-m", "ctxtop", "hook"]
    statusline = [sys.executable, "-m", "ctxtop", "statusline"]
    common = {"session_id": "bench", "transcript_path": str(transcript), "cwd": str(directory)}
    deny = {**common, "hook_event_name": "PreToolUse", "tool_name": "approve_order", "tool_input": {"order": "PO-1", "amount": 12600}}
    allow = {**common, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "make check"}}
    status = {**common, "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"}, "workspace": {"current_dir": str(directory)}}

    cold, _ = timed(hook, allow, env)  # the first call reads the whole transcript (and indexes it)
    timed(statusline, status, env)
    figures: dict[str, list[float]] = {"PreToolUse": [], "statusline": [], "SessionStart(compact)": []}
    denied = 0
    for n in range(args.runs):
        with open(transcript, "ab") as handle:
            handle.write(appended_call(2 * n))
        elapsed, out = timed(hook, deny if n % 2 == 0 else allow, env)
        figures["PreToolUse"].append(elapsed)
        denied += '"deny"' in out
        with open(transcript, "ab") as handle:
            handle.write(appended_call(2 * n + 1))
        elapsed, line = timed(statusline, status, env)
        figures["statusline"].append(elapsed)
    pre_compact, _ = timed(hook, {**common, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}, env)
    # What Claude Code has written when SessionStart(compact) runs: the boundary and the summary after it.
    summary_end = data.index(b"\n", data.index(b"\n", cut) + 1) + 1
    with open(transcript, "ab") as handle:
        handle.write(data[cut:summary_end])
    reinjected = ""
    for _ in range(args.runs):
        elapsed, reinjected = timed(hook, {**common, "hook_event_name": "SessionStart", "source": "compact"}, env)
        figures["SessionStart(compact)"].append(elapsed)
    size = transcript.stat().st_size
    print(f"transcript: {size / 1e6:.1f} MB of claude-code ({directory}); first call (no cache): {cold:.0f} ms; "
          f"PreCompact: {pre_compact:.0f} ms")
    print(f"{denied} of {args.runs} PreToolUse calls denied (the over-cap approvals); last status line: {line.strip()}")
    print(f"SessionStart put back {reinjected.count(chr(92) + 'n- ')} line(s)")
    print(f"{'hook':<24}{'median':>10}{'p90':>10}{'target':>10}{'ratio':>8}")
    for name, values in figures.items():
        median = statistics.median(values)
        p90 = sorted(values)[max(0, int(len(values) * 0.9) - 1)]
        print(f"{name:<24}{median:>8.0f}ms{p90:>8.0f}ms{TARGETS_MS[name]:>8.0f}ms{median / TARGETS_MS[name]:>8.2f}")


if __name__ == "__main__":
    main()
