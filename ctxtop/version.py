"""ctxtop's version, looked up in the installed package's metadata when asked for.

A module of its own rather than ``ctxtop.__version__`` alone: with an editable install, a folder named
``ctxtop`` in the directory a process starts in (a clone's parent, say) makes ``import ctxtop`` a namespace
package without the package's ``__init__`` — in ``python -m ctxtop`` and in the fleet audit's worker
processes alike — while its submodules, this one included, still come from the install.
"""

from __future__ import annotations

from functools import cache


@cache
def version() -> str:
    # importlib.metadata costs about 20 ms, a fifth of what `ctxtop hook` may spend before every tool
    # call: imported here, when the version is asked for.
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("ctxtop")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"
