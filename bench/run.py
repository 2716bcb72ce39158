"""The benchmark suite: every performance target of ctxtop, measured in one run, printed as a table.

    python bench/run.py [--mb 100] [--format claude-code|codex]

Each row gives the figure, its floor or target, and the ratio (figure over
target, or floor over figure, so that ≤ 1 or ≥ 1 reads as stated in the row).
Results depend on the machine and its load; no unit test asserts them.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import orjson  # noqa: E402
from generate import generate  # noqa: E402
from installed import compile_ctxtop  # noqa: E402
from peak_memory import PEAK_RSS_KB, process_tree_peak_mb  # noqa: E402


def decode_floor_seconds(path: Path, runs: int = 3) -> float:
    """orjson.loads of every line on one core: the least any reader of the whole log does (the best of
    ``runs``, the first also bringing the file into the page cache, as it is for the commands timed)."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        with open(path, "rb") as handle:
            for line in handle:
                try:
                    orjson.loads(line)
                except orjson.JSONDecodeError:
                    pass
        best = min(best, time.perf_counter() - started)
    return best


def _env(cache: Path | None) -> dict[str, str]:
    env = {**os.environ}
    if cache is None:
        env["CTXTOP_NO_CACHE"] = "1"
    else:
        env["CTXTOP_CACHE_DIR"] = str(cache)
        env.pop("CTXTOP_NO_CACHE", None)
    return env


CLI = "from ctxtop.tui.cli import entry_point; entry_point()"


def command_seconds(args: list[str], cache: Path | None) -> float:
    """Wall time of one ``ctxtop`` command, start to exit (its output thrown away; exit 1 is a failing check)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CLI, *args], cwd=ROOT, env=_env(cache), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"ctxtop {' '.join(args)}: {done.stderr.strip()}")
    return time.perf_counter() - started


def watch_first_line_seconds(path: Path) -> float:
    """From starting ``ctxtop watch --json`` to its first line (then it is stopped)."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", CLI, "watch", "--json", str(path)], cwd=ROOT, env=_env(None),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        process.stdout.readline()
        return time.perf_counter() - started
    finally:
        process.kill()
        process.wait()


def floor_seconds(path: Path) -> float:
    """JSON-decode every line and encode_ordinary every string in it: what any exact counter must do."""
    from ctxtop.context.window.tokens import load_encoding

    encoding = load_encoding("cl100k_base")
    texts: list[str] = []

    def collect(value) -> None:
        if isinstance(value, str):
            if len(value) > 3:
                texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    started = time.perf_counter()
    with open(path, "rb") as handle:
        for line in handle:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            collect(record.get("message") or record.get("payload"))
    unique = list(dict.fromkeys(texts))  # a floor that also never counts a text twice
    for text in unique:
        encoding.encode_ordinary(text)
    return time.perf_counter() - started


def open_seconds(path: Path, cache: Path | None) -> float:
    """Wall time of a fresh process opening the session and building the snapshot at its latest message."""
    env = _env(cache)
    # What the TUI does: the session and the window at its latest message (what it waits for),
    # then in the background the timeline, the rules found in the session (remembered by content,
    # as the TUI's tracker asks for them), the audit of every compaction against them and the full snapshot.
    code = (
        "import time,resource,sys;t=time.perf_counter();"
        "from ctxtop.context.window.session import Session;from ctxtop.context.output.snapshot import build_snapshot;"
        "from ctxtop.context.rules.selection import RuleRequest,select_rules;"
        "from ctxtop.context.rules.remembered import detected_constraints;"
        f"s=Session.open({str(path)!r});s.window_at(None).categories();p=time.perf_counter()-t;s.timeline();"
        "c=select_rules(s.entries,RuleRequest(auto=True),"
        "detect=lambda:detected_constraints(s.entries,s.format,s.accounting,s.counter.store));n=build_snapshot(s,constraints=c);"
        f"print(p, time.perf_counter()-t, {PEAK_RSS_KB}, len(s.entries), len(c),"
        "len(n['compactions']))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    paint, seconds, rss_kb, entries, rules, compactions = out.split()
    open_seconds.last_entries = int(entries)  # type: ignore[attr-defined]
    open_seconds.last_audited = (int(rules), int(compactions))  # type: ignore[attr-defined]
    open_seconds.last_rss_mb = int(rss_kb) / 1024  # type: ignore[attr-defined]
    open_seconds.last_paint = float(paint)  # type: ignore[attr-defined]
    return float(seconds)


def tail_paint_seconds(path: Path) -> float:
    """First paint the TUI does on a big log: the window after the last compaction, read from the end
    (a tail over 8 MB counted by estimates, as the TUI shows it)."""
    code = (
        "import time;t=time.perf_counter();from ctxtop.context.window.tail_first import tail_session;"
        f"s=tail_session({str(path)!r}, min_bytes=0);w=s.window_at(None, exact=False) if s else None;print(time.perf_counter()-t)"
    )
    env = {**os.environ, "CTXTOP_NO_CACHE": "1"}
    return float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout)


def with_a_big_tail(source: Path, target: Path, megabytes: float) -> None:
    """``source`` (a Claude Code log) followed by tool calls whose results (2 MB each, server logs) add ``megabytes`` after its
    last compaction: a first paint bounded by the window, not the file, must not read them token by token."""
    import json

    line = "2026-12-03T10:00:{:02d}.{:03d}Z worker-{} GET /api/v2/orders/{} 200 {}ms trace=0x{:08x}\n"
    common = {"sessionId": "bench", "isSidechain": False, "userType": "external", "cwd": "/srv", "version": "2.0.42",
              "timestamp": "2026-12-03T12:00:00.000Z"}
    shutil.copyfile(source, target)
    with open(target, "a", encoding="utf-8") as out:
        for n in range(max(1, round(megabytes / 2))):
            text = "".join(line.format(k % 60, k % 1000, k % 17, n * 30_000 + k, k % 97, k * 2654435761 % 2**32) for k in range(25_000))
            call = {**common, "type": "assistant", "uuid": f"tail-{n}a", "parentUuid": None,
                    "message": {"id": f"msg_tail{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                                "content": [{"type": "tool_use", "id": f"toolu_tail{n}", "name": "Bash", "input": {"command": f"cat part{n}.log"}}],
                                "usage": {"input_tokens": 10, "cache_read_input_tokens": 150_000, "output_tokens": 20}}}
            result = {**common, "type": "user", "uuid": f"tail-{n}r", "parentUuid": f"tail-{n}a",
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_tail{n}", "content": text}]}}
            out.write(json.dumps(call, separators=(",", ":")) + "\n" + json.dumps(result, separators=(",", ":")) + "\n")


def append_seconds(path: Path, format: str) -> float:
    """Median cost of taking in one appended message on the loaded session."""
    from generate import GENERATORS

    from ctxtop.context.tracker import Tracker

    os.environ["CTXTOP_NO_CACHE"] = "1"
    tracker = Tracker.open(str(path), live=True)  # as the TUI follows a log: rules, audit and alerts included
    source = GENERATORS[format](seed=99)
    times = []
    for _ in range(15):
        line = next(source)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
        started = time.perf_counter()
        tracker.poll()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def preview_seconds() -> float:
    from strategies import synthetic_window

    from ctxtop.context.strategies import Frame, preview_all
    from ctxtop.context.window.tokens import TokenCounter

    frame = Frame(synthetic_window(), TokenCounter(), [], limit=1_000_000)
    preview_all(frame)
    runs = []
    for _ in range(9):
        started = time.perf_counter()
        preview_all(frame)
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--mb", type=float, default=100.0, help="size of the synthetic session (MB)")
    options.add_argument("--big-mb", type=float, default=0.0,
                         help="also generate a session this big (e.g. 1000) for first paint and peak memory")
    options.add_argument("--format", choices=("claude-code", "codex"), default="claude-code")
    options.add_argument("--tail-mb", type=float, default=40.0,
                         help="first paint of the session with this much tool output after its last compaction (claude-code)")
    args = options.parse_args()
    compile_ctxtop()  # (timed as installed: see installed.py)
    work = Path(tempfile.mkdtemp(prefix="ctxtop-bench-"))
    try:
        rows, mb, entries = measure(work, args)
    finally:
        for path in sorted(work.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        work.rmdir()
    print(f"ctxtop benchmarks — {mb:.0f} MB synthetic {args.format} session ({entries:,} messages); "
          f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    widths = [max(len(str(r[i])) for r in rows) for i in range(4)]
    header = ("measurement", "figure", "floor / target", "ratio")
    widths = [max(w, len(h)) for w, h in zip(widths, header)]
    for row in (header, *rows):
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    print("(tail latency with a big session loaded: python bench/tail_latency.py)")


def measure(work: Path, args: argparse.Namespace) -> tuple[list[tuple[str, str, str, str]], float, int]:
    session = work / "session.jsonl"
    mb = generate(session, args.format, args.mb) / 1e6
    floor = floor_seconds(session)
    cold = open_seconds(session, None)
    paint, rss, entries = open_seconds.last_paint, open_seconds.last_rss_mb, open_seconds.last_entries  # type: ignore[attr-defined]
    cache = work / "cache"
    first_full = open_seconds(session, cache)  # fills the caches and saves the session index
    first = open_seconds.last_paint  # type: ignore[attr-defined]
    second_full = open_seconds(session, cache)
    second = open_seconds.last_paint  # type: ignore[attr-defined]
    rules, compactions = open_seconds.last_audited  # type: ignore[attr-defined]
    tail_paint, paint_mb = tail_paint_seconds(session), mb
    rss_mb = mb
    watch_first, watch_mb = watch_first_line_seconds(session), mb
    if args.big_mb:
        big = work / "big.jsonl"
        paint_mb = rss_mb = generate(big, args.format, args.big_mb) / 1e6
        tail_paint = tail_paint_seconds(big)
        watch_first, watch_mb = watch_first_line_seconds(big), paint_mb
        open_seconds(big, None)
        rss = open_seconds.last_rss_mb  # type: ignore[attr-defined]
        big.unlink()
    big_tail = None
    if args.format == "claude-code" and args.tail_mb:
        tailed = work / "tailed.jsonl"
        with_a_big_tail(session, tailed, args.tail_mb)
        big_tail = tail_paint_seconds(tailed)
        tailed.unlink()
    decode = decode_floor_seconds(session)
    export_cache = work / "export-cache"
    cold_export = command_seconds(["export", str(session)], None)
    cold_check = command_seconds(["check", "--auto", str(session)], None)
    export_memory = process_tree_peak_mb([sys.executable, "-c", CLI, "export", str(session)], _env(None), cwd=str(ROOT))
    command_seconds(["export", str(session)], export_cache)  # saves the index and fills the caches
    warm_export = command_seconds(["export", str(session)], export_cache)
    append = append_seconds(session, args.format)
    previews = preview_seconds()
    rows = [
        ("cold `export` (no caches) ÷ decode floor", f"{cold_export:.2f} s", f"decode floor {decode:.2f} s (orjson.loads per line, one core)",
         f"{cold_export / decode:.1f}× (target ≤ 2×)"),
        ("cold `check --auto` (no caches) ÷ decode floor", f"{cold_check:.2f} s", f"decode floor {decode:.2f} s", f"{cold_check / decode:.1f}× (target ≤ 2×)"),
        ("warm `export` (index and caches) ÷ decode floor", f"{warm_export:.2f} s", f"decode floor {decode:.2f} s",
         f"{warm_export / decode:.1f}× (target ≤ 1×)"),
        ("`watch`: first line", f"{watch_first:.2f} s at {watch_mb:.0f} MB", "≤ 1 s at 1 GB", f"{watch_first / 1.0:.2f}"),
        ("index throughput (open + window, no cache)", f"{mb / paint:.1f} MB/s", f"floor {mb / floor:.1f} MB/s (decode + encode_ordinary)",
         f"{floor / paint:.2f} (target ≥ 0.70)"),
        ("first paint (window after the last compaction)", f"{tail_paint:.2f} s at {paint_mb:.0f} MB", "≤ 1 s at 1 GB",
         f"{tail_paint / 1.0:.2f}"),
        *([(f"first paint, {args.tail_mb:.0f} MB of tool output after the last compaction", f"{big_tail:.2f} s",
             "≤ 1 s (estimates, marked ≈)", f"{big_tail / 1.0:.2f}")] if big_tail is not None else []),
        ("full open (open → breakdown at latest)", f"{paint:.2f} s", "(the history, indexed after first paint)", "—"),
        (f"timeline + audit ({compactions} compactions × {rules} rules found) + snapshot", f"{cold - paint:.2f} s",
         "(runs after the open, in the background)", "—"),
        ("second open (session index, token and audit caches)", f"{second:.2f} s", f"first open {first:.2f} s", f"{first / second:.1f}× (target ≥ 5×)"),
        ("second open + timeline + audit + snapshot", f"{second_full:.2f} s", f"first {first_full:.2f} s", f"{first_full / second_full:.1f}×"),
        ("peak RSS (all of the above, as the TUI does it)", f"{rss:.0f} MB at {rss_mb:.0f} MB", "< 400 MB at 1 GB", f"{rss / 400:.2f}"),
        ("peak memory, cold `export` and its forks (PSS, sampled)", f"{export_memory:.0f} MB at {mb:.0f} MB", "< 400 MB at 1 GB",
         f"{export_memory / 400:.2f}"),
        ("one appended message", f"{append * 1000:.1f} ms", "< 50 ms", f"{append * 1000 / 50:.2f}"),
        ("all strategy previews, 1M-token window", f"{previews * 1000:.1f} ms", "< 100 ms", f"{previews * 1000 / 100:.2f}"),
    ]
    return rows, mb, entries


if __name__ == "__main__":
    main()
