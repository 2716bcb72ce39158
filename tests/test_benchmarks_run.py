"""Every benchmark the README quotes runs to its table (at a tiny size: the figures themselves are
measured by hand, in one run on a quiet machine). Two of them once broke unseen: one searched the
generated log for a spacing the generator no longer writes, one started a module that was renamed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("script, arguments, printed", [
    ("run.py", ["--mb", "1", "--tail-mb", "2"], "cold `export` (no caches) ÷ decode floor"),
    ("fleet.py", ["--sessions", "3", "--mb", "1", "--jobs", "1"], "second run, nothing changed"),
    ("peers.py", ["--mb", "1", "--runs", "1"], "ctxtop export (warm)"),
    ("long_line.py", ["--mb", "1"], "1 MB"),
    ("strategies.py", [], "slowest:"),
    ("rules_speed.py", ["--mb", "1"], "ratio"),
    ("hook_latency.py", ["--mb", "3", "--runs", "1"], "SessionStart(compact)"),
    ("tail_latency.py", ["--mb", "1", "--appends", "1"], "write → watch line: median"),
])
def test_the_benchmark_runs_to_its_table(script, arguments, printed, tmp_path):
    done = subprocess.run([sys.executable, str(BENCH / script), *arguments], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and printed in done.stdout
