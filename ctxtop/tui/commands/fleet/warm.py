"""Imported once by the fork server the worker processes start from: what every worker needs is
loaded there and shared by all of them (the tokenizer alone takes a quarter of a second to load)."""

from __future__ import annotations

from ctxtop.context.window.tokens import DEFAULT_ENCODING, load_encoding
from ctxtop.tui.commands.fleet import worker  # noqa: F401 - the function the workers run, imported ahead

try:
    load_encoding(DEFAULT_ENCODING)
except Exception:  # noqa: BLE001 - then each worker loads it (and reports what is wrong) itself
    pass
