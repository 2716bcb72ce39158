"""What Dask says when a cluster shuts down under its workers, made to happen on every run.

``python -m tests.dask_shutdown_noise ARGS…`` runs ``ctxtop ARGS…`` with two of the messages a Dask run can
print at its end made certain: each worker, once closed, logs what a heartbeat still in flight logs then
("Failed to communicate with scheduler during heartbeat", a CommClosedError traceback: one run in twenty did
so, after Dask's own quieting is undone), and tornado, in this process, logs a callback's CommClosedError (its
logger has its own handler, which Dask's silence_logs never quiets). A process of its own: its stderr is the
one the user would see, whatever pytest does with this one's.
"""

from __future__ import annotations

import logging
import sys

from ctxtop.tui.commands.fleet.worker import Task, audit_task

HEARTBEAT_FAILED = "Failed to communicate with scheduler during heartbeat."
CALLBACK_FAILED = "Exception in callback functools.partial(<function Worker.heartbeat>)"


def audit_then_complain_at_close(task: Task):
    """``audit_task``, in a worker that complains once closed (run there: importable by name)."""
    import distributed
    from distributed.comm.core import CommClosedError

    worker = distributed.get_worker()
    if not getattr(worker, "complains_at_close", False):
        worker.complains_at_close = True
        close = worker.close

        async def close_then_complain(*args, **kwargs):
            result = await close(*args, **kwargs)
            try:
                raise CommClosedError("in <TCP (closed) ConnectionPool.heartbeat_worker>: Stream is closed")
            except CommClosedError:
                logging.getLogger("distributed.worker").exception(HEARTBEAT_FAILED)
            print("Traceback (most recent call last): what a dying worker process prints", file=sys.stderr, flush=True)
            return result

        worker.close = close_then_complain
    return audit_task(task)


def main(argv: list[str]) -> int:
    import distributed
    from distributed.comm.core import CommClosedError

    from ctxtop.tui.cli import main as ctxtop
    from ctxtop.tui.commands.fleet import engines

    engines.audit_task = audit_then_complain_at_close
    close = distributed.Client.close

    def complain_then_close(self, *args, **kwargs):
        try:
            raise CommClosedError("in <TCP (closed) Scheduler Broadcast>: Stream is closed")
        except CommClosedError:
            logging.getLogger("tornado.application").exception(CALLBACK_FAILED)
        return close(self, *args, **kwargs)

    distributed.Client.close = complain_then_close
    return ctxtop(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
