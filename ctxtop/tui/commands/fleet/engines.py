"""Where the sessions are audited: in worker processes on this machine, or on a Dask cluster.

Both run the same function (``worker.audit_task``) on the same tasks, so they give the same
rows; the run sorts them. A worker that dies (killed for memory, say) costs the sessions it
held, never the run: they are tried again one at a time, and listed as skipped if that fails too.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ctxtop.context.fleet.session import SessionAudit
from ctxtop.tui.commands.fleet.extra import need
from ctxtop.tui.commands.fleet.worker import Task, audit_task
from ctxtop.tui.errors import UsageError

# Worker processes are replaced after about this many sessions each: what a big log left allocated goes with them.
TASKS_PER_WORKER = 100
WORKER_DIED = "the worker process auditing it died (out of memory?)"
DASK_FAILED = "the Dask worker auditing it failed"

Engine = Callable[[Sequence[Task], int], Iterator[SessionAudit]]


def run_local(tasks: Sequence[Task], jobs: int) -> Iterator[SessionAudit]:
    """``jobs`` worker processes (1: in this process, one session at a time)."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield audit_task(task)
        return
    lost: list[Task] = []
    # A fresh pool every ``jobs × TASKS_PER_WORKER`` sessions bounds what a worker accumulates. (Not
    # max_tasks_per_child: a pool using it stops replacing its workers on CPython 3.11 to 3.14, gh-115634.)
    batch = jobs * TASKS_PER_WORKER
    for start in range(0, len(tasks), batch):
        part = tasks[start : start + batch]
        with _pool(min(jobs, len(part))) as pool:
            futures = {pool.submit(audit_task, task): task for task in part}
            for future in as_completed(futures):
                try:
                    yield future.result()
                except BrokenProcessPool:
                    lost.append(futures[future])
    for task in lost:  # alone in a process of its own: only the session that kills a worker is lost
        with _pool(1) as pool:
            try:
                yield pool.submit(audit_task, task).result()
            except BrokenProcessPool:
                yield SessionAudit(task.name, skipped=WORKER_DIED)


def lost_by_engine(result: SessionAudit) -> bool:
    """Whether the engine lost the session (a worker died) rather than the session's own audit skipping it."""
    return result.skipped is not None and (result.skipped == WORKER_DIED or result.skipped.startswith(DASK_FAILED))


def _pool(workers: int) -> ProcessPoolExecutor:
    # forkserver: each worker starts from a clean process that has ctxtop imported and the tokenizer
    # loaded (fork would copy this one's state; spawn would load everything again for every worker).
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context: Any = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(["ctxtop.tui.commands.fleet.warm"])
    # The fork server keeps the environment it started with: ctxtop's own settings (the cache folder…) are handed on.
    settings = {name: value for name, value in os.environ.items() if name.startswith("CTXTOP_")}
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_environment, initargs=(settings,))


def _worker_environment(settings: dict[str, str]) -> None:
    for name in [name for name in os.environ if name.startswith("CTXTOP_") and name not in settings]:
        del os.environ[name]
    os.environ.update(settings)


def dask_engine(scheduler: str | None) -> Engine:
    """A Dask cluster: the one at ``scheduler`` (``tcp://host:8786``), or a local one of ``jobs`` worker processes (no more
    than there are sessions to audit, as the local engine starts)."""

    def run(tasks: Sequence[Task], jobs: int) -> Iterator[SessionAudit]:
        distributed = need("distributed", "--engine dask")
        need("dask", "--engine dask")
        if not tasks:
            return
        _silence_dask_logs()
        cluster = None
        if scheduler is not None:  # (the command refuses an empty one: it is no request for a local cluster)
            try:
                _reach(scheduler)
                client = distributed.Client(scheduler, timeout=f"{SCHEDULER_SECONDS}s")
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {str(exc) or f'no answer in {SCHEDULER_SECONDS} s'}") from None
            except Exception as exc:  # noqa: BLE001 - no address (ValueError), a scheme not set up (TypeError), a reply no Dask's (MemoryError)
                why = f"{type(exc).__name__}: {exc}" if str(exc) else f"its reply is no Dask scheduler's ({type(exc).__name__})"
                raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {why}") from None
        else:
            try:
                # The workers' stderr goes nowhere (QUIET_WORKER): Dask's silence_logs is undone as each closes.
                cluster = distributed.LocalCluster(n_workers=max(1, min(jobs, len(tasks))), threads_per_worker=1, processes=True,
                                                   dashboard_address=None, silence_logs=logging.CRITICAL,
                                                   preload=[QUIET_WORKER])
                client = distributed.Client(cluster)
            except Exception as exc:  # noqa: BLE001 - no port, no process could start…: one line, not Dask's traceback
                if cluster is not None:
                    _close(cluster)
                raise UsageError(f"cannot start a local Dask cluster: {type(exc).__name__}: {exc}") from None
        try:
            futures = client.map(audit_task, list(tasks), pure=False)
            names = {future.key: task.name for future, task in zip(futures, tasks)}
            for future in distributed.as_completed(futures):
                try:
                    yield future.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: that session only
                    yield SessionAudit(names[future.key], skipped=f"{DASK_FAILED}: {type(exc).__name__}")
        finally:
            # The client first: closed after the cluster, it would still try to reach a scheduler gone. Each in a bound.
            _close(client)
            if cluster is not None:
                _close(cluster)

    return run


SCHEDULER_SECONDS = 10


def _reach(scheduler: str) -> None:
    """Connect to ``scheduler`` and have its handshake, in a bound: a Client's own timeout covers the connection only, and
    a Client given the address of a service that is no Dask scheduler (an HTTP port: the dashboard's) waited for ever,
    or read its reply as a frame's length and ran out of memory."""
    import asyncio

    from distributed.comm import connect

    async def handshake() -> None:
        comm = await asyncio.wait_for(connect(scheduler, timeout=SCHEDULER_SECONDS), SCHEDULER_SECONDS + 1)
        await comm.close()

    asyncio.run(handshake())


QUIET_WORKER = "ctxtop.tui.commands.fleet.dask_worker"
CLOSE_SECONDS = 20
# Loggers of Dask and of what it runs on: distributed.client's, distributed.gc's, tornado's and bokeh's each have a
# handler of their own on stderr, which Dask's silence_logs leaves as it is (tornado logs a failed callback's
# traceback there); asyncio logs a task that failed with none to await it.
DASK_LOGGERS = ("distributed", "tornado", "bokeh", "asyncio")
SILENT = logging.CRITICAL + 1


def _close(closable: Any) -> None:
    try:
        closable.close(timeout=CLOSE_SECONDS)
    except Exception:  # noqa: BLE001 - the results are in: a close that fails or times out is no failure of the run
        pass


def _silence_dask_logs() -> None:
    """No log line of Dask's in this process (its scheduler, its nannies, the client) from the cluster's start on,
    where its own quieting is undone as each part closes, and for the rest of the process: Dask's exit handlers
    close again at interpreter exit what did not close in time. What fails reaches a session's row as
    ``skipped``, or the user as one line (a cluster that cannot start or be reached)."""
    names = [name for name in list(logging.root.manager.loggerDict) if name.partition(".")[0] in DASK_LOGGERS]
    for name in [*DASK_LOGGERS, *names]:
        logging.getLogger(name).setLevel(SILENT)  # (the ones made later have no level: they take their family's)
