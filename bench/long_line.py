"""Peak memory and time of `ctxtop export` on a session whose one tool output is a single huge line.

    python bench/long_line.py [--mb 50 200]

The tool output is base64 (no newline to cut at), as an agent reading a binary
file would log it. Each size runs in a fresh process; its peak RSS is the
child's own high-water mark (``peak_memory.PEAK_RSS_KB``). Memory should grow
with the line (it is read and decoded once) and not with its tokens:
tokenizing holds one segment at a time.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import compile_ctxtop
from peak_memory import PEAK_RSS_KB

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "ctxtop" / "tui" / "data" / "demo_session.jsonl"


def write_session(path: Path, megabytes: int) -> None:
    lines = DEMO.read_bytes().splitlines(keepends=True)[:6]
    call = json.loads(next(line for line in lines if b'"tool_use"' in line))
    tool_id = call["message"]["content"][0]["id"]
    result = json.loads(next(line for line in DEMO.read_bytes().splitlines() if b'"tool_result"' in line))
    payload = base64.b64encode(os.urandom(megabytes * 3 << 18)).decode()  # megabytes MB of base64
    result["message"]["content"] = [{"type": "tool_result", "tool_use_id": tool_id, "content": payload}]
    with open(path, "wb") as out:
        out.writelines(lines)
        out.write(json.dumps(result).encode() + b"\n")


def measure(megabytes: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder, "long-line.jsonl")
        write_session(log, megabytes)
        env = {**os.environ, "CTXTOP_NO_CACHE": "1"}
        code = ("import resource, sys; from ctxtop.tui.cli import main; code = main(['export', sys.argv[1]]); "
                f"print({PEAK_RSS_KB}, file=sys.stderr); sys.exit(code)")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, env=env, cwd=ROOT)
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        peak_kb = int(done.stderr.strip().splitlines()[-1])
        return peak_kb / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, nargs="+", default=[50, 200])
    args = parser.parse_args()
    compile_ctxtop()  # (timed as installed: see installed.py)
    print(f"{'line':>8}  {'peak RSS':>10}  {'RSS / line':>10}  {'seconds':>8}")
    for megabytes in args.mb:
        peak, seconds = measure(megabytes)
        print(f"{megabytes:>5} MB  {peak:>7.0f} MB  {peak / megabytes:>10.2f}  {seconds:>8.1f}")


if __name__ == "__main__":
    main()
