"""Loaded by each worker process of the local Dask cluster ``--engine dask`` starts (a Dask preload).

A worker process writes to the stderr it was started with, the user's terminal, and Dask's own quieting
(``silence_logs``) is undone as each worker closes: a heartbeat still in flight when the cluster shuts down
then logs a CommClosedError traceback on a run that went well. Nothing a worker would print is the user's
to read (a session's failure comes back as its row's ``skipped``), so its stderr goes nowhere, for its life.
"""

from __future__ import annotations

import os
from typing import Any


def dask_setup(worker: Any) -> None:
    nowhere = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(nowhere, 2)  # the descriptor itself: logging, tracebacks and warnings alike, from Python or not
    finally:
        os.close(nowhere)
