"""`ctxtop audit` over many real-shaped sessions: the first run, a second with nothing changed, peak RSS per process.

    python bench/fleet.py [--sessions 1000] [--mb 1] [--jobs 2]

Sessions come from bench/generate.py (half Claude Code, half Codex, each its own seed, compacted
two or three times as the prompt passes 30-40K tokens, the rules file stated first). Both runs
are `ctxtop audit FOLDER --out DIR --jobs N` in a fresh process, with a fresh cache folder for
the first (cold: no token count nor audit cached). Peak RSS is each process's high-water mark
(``VmHWM``), read from /proc every 0.1 s while the run goes: the main process, and the largest
of its worker processes. Targets (issue 23): 1,000 sessions of ~1 MB ≤ 120 s with --jobs 2, a
second run ≤ 10 s, ≤ 400 MB a worker.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # noqa: E402
from installed import compile_ctxtop  # noqa: E402

TARGET_FIRST_SECONDS_PER_1000 = 120
TARGET_SECOND_SECONDS = 10
TARGET_WORKER_MB = 400
# Sessions of ~1 MB compact two to four times: the agents' thresholds, lowered to a 1 MB session's scale.
generate.CLAUDE_COMPACT_AT, generate.CODEX_COMPACT_AT = 30_000, 40_000


def _high_water_marks(root: int, cpu: dict[int, int]) -> dict[int, int]:
    """VmHWM (kB) of ``root`` and every process below it; their CPU time so far (ticks) goes into ``cpu``."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                parents[int(entry)] = int(fields[1])
                ticks[int(entry)] = int(fields[11]) + int(fields[12])  # utime + stime
            except (OSError, ValueError, IndexError):
                continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    for pid in tree:
        cpu[pid] = max(cpu.get(pid, 0), ticks.get(pid, 0))
    marks = {}
    for pid in tree:
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        marks[pid] = int(line.split()[1])
        except OSError:
            continue
    return marks


def timed_run(argv: list[str], env: dict[str, str]) -> tuple[float, int, int, str, float, float]:
    """(seconds, main process peak MB, largest worker peak MB, stderr, CPU seconds of all its processes, the
    share of the machine's CPU other programs used meanwhile) of one `ctxtop audit` (CPU sampled every 0.1 s:
    a worker's last tenth of a second may be missed)."""
    started = time.perf_counter()
    machine_before = _machine_ticks()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peaks: dict[int, int] = {}
    cpu: dict[int, int] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for pid, mark in _high_water_marks(process.pid, cpu).items():
                peaks[pid] = max(peaks.get(pid, 0), mark)
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, err = process.communicate()
    seconds = time.perf_counter() - started
    busy, total = (after - before for after, before in zip(_machine_ticks(), machine_before))
    done.set()
    watcher.join()
    if process.returncode != 0:
        raise SystemExit(f"ctxtop audit failed: {err}")
    main_mb = peaks.pop(process.pid, 0) // 1024
    # The fork server holds ctxtop imported and nothing else; the workers are what grow.
    worker_mb = max(peaks.values(), default=0) // 1024
    ours = sum(cpu.values())
    return seconds, main_mb, worker_mb, err.strip(), ours / os.sysconf("SC_CLK_TCK"), max(0, busy - ours) / total if total else 0.0


def _machine_ticks() -> tuple[int, int]:
    """(busy, all) CPU ticks of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return sum(values) - idle, sum(values)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--sessions", type=int, default=1000)
    options.add_argument("--mb", type=float, default=1.0)
    options.add_argument("--jobs", type=int, default=2)
    args = options.parse_args()
    compile_ctxtop()  # (timed as installed: see installed.py)
    with tempfile.TemporaryDirectory(prefix="ctxtop-fleet-bench-") as scratch:
        folder, out, cache = Path(scratch, "sessions"), Path(scratch, "out"), Path(scratch, "cache")
        folder.mkdir()
        started = time.perf_counter()
        total = 0
        for number in range(args.sessions):
            log_format = "claude-code" if number % 2 == 0 else "codex"
            name = f"{log_format}-{number:05d}.jsonl"
            total += generate.generate(folder / name, log_format, args.mb, seed=number + 1)
        print(f"generated {args.sessions:,} sessions, {total / 1e6:,.0f} MB, in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        env = {**os.environ, "CTXTOP_CACHE_DIR": str(cache)}
        env.pop("CTXTOP_NO_CACHE", None)
        argv = [sys.executable, "-m", "ctxtop", "audit", str(folder), "--out", str(out), "--jobs", str(args.jobs)]
        first = timed_run(argv, env)
        second = timed_run(argv, env)
        target_first = TARGET_FIRST_SECONDS_PER_1000 * args.sessions / 1000
        rows = [
            ("first run (cold caches)", f"{first[0]:.1f} s", f"≤ {target_first:.0f} s", first[0] / target_first),
            ("second run, nothing changed", f"{second[0]:.1f} s", f"≤ {TARGET_SECOND_SECONDS} s", second[0] / TARGET_SECOND_SECONDS),
            ("peak RSS, largest worker", f"{first[2]} MB", f"≤ {TARGET_WORKER_MB} MB", first[2] / TARGET_WORKER_MB),
            ("peak RSS, main process (first / second run)", f"{first[1]} / {second[1]} MB", "—", None),
            ("CPU time of the first run, all processes", f"{first[4]:.1f} s", "—", None),
            # Below 1: the workers waited for a core (another program had it), not for each other's work.
            (f"share of {args.jobs} cores the first run got", f"{first[4] / (first[0] * args.jobs):.0%}", "—", None),
            ("share of the machine other programs used meanwhile", f"{first[5]:.0%}", "—", None),
        ]
        print(f"\n{args.sessions:,} sessions of ~{args.mb:g} MB ({total / 1e6:,.0f} MB), --jobs {args.jobs}, "
              f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
        print(f"first:  {first[3]}\nsecond: {second[3]}\n")
        print(f"| {'measurement':<52} | {'figure':>14} | {'target':>9} | ratio |")
        print(f"|{'-' * 54}|{'-' * 16}|{'-' * 11}|-------|")
        for label, figure, target, ratio in rows:
            print(f"| {label:<52} | {figure:>14} | {target:>9} | {f'{ratio:.2f}' if ratio is not None else '—':>5} |")


if __name__ == "__main__":
    main()
