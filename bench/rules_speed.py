"""How long rule auto-detection takes when a session opens, and that it grows linearly.

Times ``detect_constraints`` on the bundled demo and on bench-generated sessions
(bench/generate.py) of two sizes, and ``detect_rules`` on one instruction text
repeated 1× and 8×: the ratio of times should be near the ratio of sizes.
Ratios from one run on this machine; not a unit test.

    python bench/rules_speed.py [--mb 20] [--format claude-code|codex]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate  # noqa: E402

from ctxtop.context.rules.constraints import detect_constraints  # noqa: E402
from ctxtop.context.rules.detect import detect_rules  # noqa: E402
from ctxtop.context.window.session import Session  # noqa: E402
from ctxtop.tui.demo import demo_path  # noqa: E402

EVAL_TEXTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "rules_eval" / "texts"


def timed(function, *args):
    """The result and the CPU seconds it took (CPU, not wall: this machine is shared)."""
    start = time.process_time()
    result = function(*args)
    return result, time.process_time() - start


def session_detection(path: Path, label: str) -> None:
    session, open_seconds = timed(Session.open, path)
    rules, seconds = timed(detect_constraints, session.entries, session.format)
    print(f"{label:34} {len(session.entries):>8,} entries  {len(rules):>3} rules  detection {seconds * 1000:8.1f} ms"
          f"  (opening took {open_seconds:.2f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--format", default="claude-code")
    args = parser.parse_args()
    session_detection(demo_path(), "demo")
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in (args.mb / 4, args.mb):
            path = Path(tmp) / f"session-{megabytes:g}.jsonl"
            generate(path, args.format, megabytes, seed=1)
            session_detection(path, f"generated {args.format} {megabytes:g} MB")
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(EVAL_TEXTS.glob("*.md")))
    small, small_seconds = timed(detect_rules, text)
    big, big_seconds = timed(detect_rules, text * 8)
    print(f"instruction text {len(text):,} chars: {len(small)} rules in {small_seconds * 1000:.1f} ms; "
          f"8× the text: {len(big)} rules in {big_seconds * 1000:.1f} ms (ratio {big_seconds / small_seconds:.1f}, size ratio 8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
