"""The peak memory of a child process, as an expression the child evaluates before it exits.

Not ``ru_maxrss``: on Linux a process keeps the high-water mark of the memory it replaced at
``exec``, so a child started by a benchmark that has just decoded a whole log reports the
benchmark's own peak (a 200 MB Codex session read 521 MB where ctxtop's peaked at 228 MB).
``VmHWM`` in /proc belongs to the child's own address space. Elsewhere (no /proc) the expression
falls back to ``ru_maxrss`` (kB on Linux; bytes on macOS, where the figure is then not comparable).
"""

# The child's peak resident set in kB, as Python source for ``python -c``; needs ``import resource``.
PEAK_RSS_KB = (
    "(next((int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')), 0)"
    " if __import__('os').path.exists('/proc/self/status')"
    " else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
)
