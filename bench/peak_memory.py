"""The peak memory of a child process, as an expression the child evaluates before it exits.

Not ``ru_maxrss``: on Linux a process keeps the high-water mark of the memory it replaced at
``exec``, so a child started by a benchmark that has just decoded a whole log reports the
benchmark's own peak (a 200 MB Codex session read 521 MB where ctxtop's peaked at 228 MB).
``VmHWM`` in /proc belongs to the child's own address space. Elsewhere (no /proc) the expression
falls back to ``ru_maxrss`` (kB on Linux; bytes on macOS, where the figure is then not comparable).
"""

import subprocess
import time

# The child's peak resident set in kB, as Python source for ``python -c``; needs ``import resource``.
PEAK_RSS_KB = (
    "(next((int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')), 0)"
    " if __import__('os').path.exists('/proc/self/status')"
    " else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)


def process_tree_peak_mb(command: list[str], env: dict[str, str], cwd: str | None = None, interval: float = 0.05) -> float:
    """Run ``command`` and return the highest memory it and its children held together, in MB.

    ``ctxtop export`` and ``check`` fork a second process for half their work, which shares most of its
    parent's memory: adding their resident sets would count the shared pages twice. The proportional
    set size (PSS) divides each shared page among the processes sharing it, so the sum is what they
    hold together. Sampled every ``interval`` seconds while the command runs (a peak shorter than
    that can be missed); Linux only (``/proc/<pid>/smaps_rollup``)."""
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak_kb = 0
    while process.poll() is None:
        peak_kb = max(peak_kb, sum(_pss_kb(pid) for pid in _tree(process.pid)))
        time.sleep(interval)
    return peak_kb / 1024


def _tree(pid: int) -> list[int]:
    found, waiting = [], [pid]
    while waiting:
        parent = waiting.pop()
        found.append(parent)
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as listing:
                waiting += [int(child) for child in listing.read().split()]
        except OSError:
            pass  # gone meanwhile
    return found


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            return next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
    except OSError:
        return 0  # gone meanwhile
