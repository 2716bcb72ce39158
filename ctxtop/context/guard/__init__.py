"""The guard: what ctxtop's agent hooks decide, headless (the top layer of ``context``).

A hook is one short process per event (``ctxtop hook``, ``ctxtop statusline``):
``payload`` reads what the agent sends, ``transcript`` knows the session fast
(the rules it states, kept between calls in ctxtop's cache directory, and the
window after its last compaction), ``rules`` decides the rules in force through
the same ``select_rules`` every front end uses, and one module answers each
event: ``judge`` (PreToolUse: the audit's own violation checks), ``reinject``
(SessionStart after a compaction), ``record`` (PreCompact), ``status`` (the
status line).
"""
