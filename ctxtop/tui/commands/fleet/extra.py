"""The fleet audit's dependencies are an extra (``pip install 'ctxtop[fleet]'``): imported only here, when needed."""

from __future__ import annotations

import importlib
from types import ModuleType

from ctxtop.tui.errors import UsageError

INSTALL = "pip install 'ctxtop[fleet]'"


def need(module: str, why: str = "ctxtop audit") -> ModuleType:
    """``module``, imported; a one-line error naming the extra when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(f"{why} needs the fleet extra ({module} is not installed): {INSTALL}") from None
