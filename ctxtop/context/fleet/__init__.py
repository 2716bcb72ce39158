"""The fleet audit: the same audit as ``check --auto`` and the compaction forensics, over many sessions.

One session at a time is a pure function (``session.audit_session``: a log in, one table row and
one row per compaction out), so any engine can run it — a local process pool, a Dask cluster —
and get the same rows. ``columns`` names the tables' columns and types, ``reuse`` what a second
run may take from the first (by content digest), and ``report`` sums a run up for people.
Where the logs live and how the work is spread is for the front end (``tui/commands/fleet``).
"""
