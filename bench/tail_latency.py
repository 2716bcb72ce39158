"""Benchmark: from a write to the log to the updated `ctxtop watch` line, with a big session loaded.

Target (issue 6): median under 250 ms with a 100 MB session already loaded.
A second process (this script) appends real Claude Code lines to a session
that `ctxtop watch --json` follows; each watch line carries the time it was
printed, so write → line latency is measured directly. Prints the sizes, the
load time, the latencies and their ratio to the target, all from this run.

Run: python bench/tail_latency.py [--mb 100] [--appends 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import compile_ctxtop

TARGET_MS = 250.0
ROOT = Path(__file__).resolve().parents[1]


def record(kind: str, n: int, content, **extra) -> str:
    message = {"role": kind, "content": content, **extra}
    return json.dumps({"type": kind, "sessionId": "bench", "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None,
                       "timestamp": "2026-12-03T00:00:00.000Z", "message": message}) + "\n"


def lines(start: int):
    """An endless agent loop: a question, a tool call, a 2 KB tool result, an answer.

    The usage grows as a real prompt does (about 600 tokens per loop), so no
    drop looks like a compaction.
    """
    n = start
    payload = ("log line with some numbers 12345 and words; " * 48)[:2000]
    while True:
        prompt = 1000 + 150 * n
        yield record("user", n, f"step {n}: check the build")
        yield record("assistant", n + 1, [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"make {n}"}}],
                     id=f"m{n}", model="claude-sonnet-4-5", usage={"input_tokens": prompt, "output_tokens": 20})
        yield record("user", n + 2, [{"type": "tool_result", "tool_use_id": f"t{n}", "content": f"{n} {payload}"}])
        yield record("assistant", n + 3, [{"type": "text", "text": f"step {n} done"}], id=f"a{n}",
                     model="claude-sonnet-4-5", usage={"input_tokens": prompt + 520, "output_tokens": 5})
        n += 4


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--mb", type=float, default=100.0, help="size of the session to load first (MB)")
    options.add_argument("--appends", type=int, default=30)
    args = options.parse_args()
    compile_ctxtop()  # (timed as installed: see installed.py)
    directory = Path(tempfile.mkdtemp(prefix="ctxtop-bench-"))
    log = directory / "session.jsonl"
    source = lines(0)
    with open(log, "w") as handle:
        while handle.tell() < args.mb * 1_000_000:
            handle.write(next(source))
    size = log.stat().st_size
    started = time.perf_counter()
    watch = subprocess.Popen([sys.executable, "-m", "ctxtop", "watch", str(log), "--json"], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first = json.loads(watch.stdout.readline())
    load_s = time.perf_counter() - started
    latencies = []
    try:
        for _ in range(args.appends):
            text = next(source)
            written = time.time()
            with open(log, "a") as handle:
                handle.write(text)
            while True:
                update = json.loads(watch.stdout.readline())
                if update["type"] == "update" and update["new"] > 0 or update.get("messages", 0) > first["messages"]:
                    break
            latencies.append((update["time"] - written) * 1000)
            first = update
            time.sleep(0.2)
    finally:
        watch.terminate()
    median = statistics.median(latencies)
    print(f"session: {size / 1e6:.1f} MB, {first['messages']:,} messages; watch loaded it in {load_s:.1f} s")
    print(f"write → watch line: median {median:.1f} ms, p90 {sorted(latencies)[int(len(latencies) * 0.9) - 1]:.1f} ms,"
          f" max {max(latencies):.1f} ms over {len(latencies)} appends")
    print(f"ratio to the {TARGET_MS:.0f} ms target: {median / TARGET_MS:.2f} (below 1 meets it)")
    log.unlink()
    directory.rmdir()


if __name__ == "__main__":
    main()
