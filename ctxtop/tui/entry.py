"""The ``ctxtop`` console script: ``hook`` and ``statusline`` start fast, everything else is the full CLI.

An agent runs ``ctxtop hook`` before every tool call and ``ctxtop statusline``
after every message: they import only the guard (no Textual, no exports, no
strategies), which is most of their time budget.
"""

from __future__ import annotations

import sys

FAST_COMMANDS = ("hook", "statusline")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in FAST_COMMANDS:
        from ctxtop.tui.commands import hook

        return hook.run_hook(argv[1:]) if argv[0] == "hook" else hook.run_statusline(argv[1:])
    from ctxtop.tui.cli import main as full_main

    return full_main(argv)


def entry_point() -> None:
    sys.exit(main())
