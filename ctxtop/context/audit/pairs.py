"""The text half of the audit: each compaction's windows before and after, read and compared.

This is most of an audit's time on a big session (every window's text is normalized, split into
terms and scanned for facts), and each pair depends only on its two windows: a command that reads
a whole log on a machine with a second core gives the later pairs to a forked copy of the process
(``second_core``), which replays to their windows and sends the results back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import Any

from ctxtop.context import second_core
from ctxtop.context.audit.cache import AuditCache, pair_key, window_key
from ctxtop.context.audit.forensics.pair import pair_facts
from ctxtop.context.audit.lost import lost_items
from ctxtop.context.rules.constraints import Constraint, Status, WindowText
from ctxtop.context.window.replay import Replay, Window
from ctxtop.context.window.session import Session

PairResult = tuple[dict[str, tuple[Status, Status]], dict[str, list[str]], dict[str, Any]]
# (compaction message, the message whose window counts as "after", the constraints audited there)
PairJob = tuple[int, int, list[Constraint]]
# A pair audited, by what its two windows held: (compaction message, "after" message, the windows' keys
# before and after, ``cache.window_key``). From the same final entries, the same windows: another process's
# are this one's.
SeenPair = tuple[int, int, bytes, bytes]
# Fewer pairs than this are not worth a process: forking and sending back cost more than they save.
MIN_FORKED_PAIRS = 4


def audited_at(constraints: list[Constraint], compaction: int) -> list[Constraint]:
    """The constraints a compaction is judged on: those stated before it (or never, a pin)."""
    return [c for c in constraints if c.first_stated is None or c.first_stated < compaction]


def audit_pairs(session: Session, jobs: list[PairJob], cache: AuditCache, *, from_checkpoints: bool = False,
                processes: int = 1, seen: Collection[SeenPair] = ()) -> dict[tuple[int, int], PairResult]:
    """Each job's statuses, lost facts and forensics facts, by (compaction, after); a pair whose window
    the session does not reach is left out. ``from_checkpoints``: replay each window from the session's
    checkpoint before it (a few windows late in a followed log) rather than all in one replay.
    ``processes=2``: split the jobs with a forked process, when that is safe (``second_core.can_fork``).
    ``seen``: pairs whose windows' keys are known (a fork audited them from the same final entries): one
    whose result ``cache`` holds for the job's rules is taken as it is, with no replay to its windows."""
    known = {(message, after): keys for message, after, *keys in seen}
    results: dict[tuple[int, int], PairResult] = {}
    left = []
    for message, after, constraints in jobs:
        keys = known.get((message, after))
        found = cache.get(pair_key(keys[0], keys[1], constraints, message)) if keys is not None else None
        if found is not None:
            results[message, after] = found
        else:
            left.append((message, after, constraints))
    if processes > 1 and len(left) >= MIN_FORKED_PAIRS and second_core.can_fork():
        results.update(_split_with_a_fork(session, left, cache, from_checkpoints))
    else:
        results.update(_results(session, left, cache, from_checkpoints))
    return results


def audit_one_by_one(session: Session, jobs: list[PairJob], cache: AuditCache, should_stop: Callable[[], bool]) -> list[SeenPair]:
    """The jobs audited into ``cache`` in their order, as long as ``should_stop()`` says no before each: the
    pairs audited. Jobs in message order share one replay; others each replay from the kept replay
    nearest before their window."""
    audited: list[SeenPair] = []
    in_order = all(job[0] < following[0] for job, following in zip(jobs, jobs[1:]))
    for run in [jobs] if in_order else [[job] for job in jobs]:
        if should_stop():
            break
        for (message, after), keys, _ in _audited(session, run, cache, False):
            audited.append((message, after, *keys))
            if should_stop():
                return audited
    return audited


def _results(session: Session, jobs: list[PairJob], cache: AuditCache, from_checkpoints: bool
             ) -> dict[tuple[int, int], PairResult]:
    """``_audited``'s results by pair, without the windows' keys."""
    return {pair: result for pair, _, result in _audited(session, jobs, cache, from_checkpoints)}


def _audited(session: Session, jobs: list[PairJob], cache: AuditCache, from_checkpoints: bool
             ) -> Iterator[tuple[tuple[int, int], tuple[bytes, bytes], PairResult]]:
    """The jobs audited in order, each with its windows' keys; only the windows of the pair at hand (and
    those the next needs) are held: the texts of every window at once could outweigh the log."""
    needed = {message - 1 for message, _, _ in jobs} | {after for _, after, _ in jobs}
    windows = _windows_at(session, needed) if from_checkpoints else _windows(session, needed)
    held: dict[int, tuple[bytes, Window]] = {}
    last_after: WindowText | None = None  # the last window after read: the next window before holds its summary
    for index, (message, after, constraints) in enumerate(jobs):
        while after not in held and (found := next(windows, None)) is not None:
            held[found[0]] = found[1:]
        before_window, after_window = held.get(message - 1), held.get(after)
        if before_window is not None and after_window is not None:
            result, last_after = _audit_pair(before_window, after_window, constraints, cache, message, session.counter.count, last_after)
            yield (message, after), (before_window[0], after_window[0]), result
        following = jobs[index + 1][0] if index + 1 < len(jobs) else None
        held = {at: window for at, window in held.items() if following is not None and at >= following - 1}


def _audit_pair(before: tuple[bytes, Window], after: tuple[bytes, Window], constraints: list[Constraint], cache: AuditCache,
                compaction: int, count: Callable[[str], int], earlier: WindowText | None = None
                ) -> tuple[PairResult, WindowText | None]:
    """Each constraint's status before → after, the facts lost and what the forensics read from the
    two windows: remembered, or read from the windows' text; and the window after's text, if read.
    ``earlier``: the text of the window after the compaction before (its summary, which the window before
    holds, is not read again: ``WindowText``)."""
    key = pair_key(before[0], after[0], constraints, compaction)
    found = cache.get(key)
    if found is not None:
        return found, None
    before_text, after_text = WindowText(before[1], earlier), WindowText(after[1])
    statuses = {c.id: (before_text.status(c), after_text.status(c)) for c in constraints}
    lost = lost_items(before_text, after_text)
    facts = pair_facts(before_text, after_text, after[1], compaction, count)
    cache.put(key, statuses, lost, facts)
    return (statuses, lost, facts), after_text


def _windows(session: Session, messages: set[int]) -> Iterator[tuple[int, bytes, Window]]:
    """The window at each of ``messages``, in order: its content key and a copy of it. Replayed on from one
    to the next, or from the session's kept replay nearest before the next when that is further on: a
    stretch is replayed only when a window in it, or after it before the next kept replay, is needed
    (a second process auditing the later pairs, or the pairs left once the forks' are taken, replays only
    their part of the session)."""
    replay: Replay | None = None
    for message in sorted(messages):
        if message == 0:
            yield 0, window_key(Window(at=0), session.accounting), Window(at=0)
            continue
        if replay is None or session.kept_replay_before(message) > replay.position:
            replay = session.replay_near(message)
        for _ in replay.run(message):
            pass
        if replay.position != message:
            return  # past the session's end
        yield message, window_key(replay.window, session.accounting), _copy(replay.window)


def _copy(window: Window) -> Window:
    """A copy of the block list (the replay goes on changing the window), not of the blocks."""
    return Window(window.at, list(window.blocks), window.last_compaction)


def _windows_at(session: Session, messages: set[int]) -> Iterator[tuple[int, bytes, Window]]:
    """As ``_windows``, each window replayed from the session's checkpoint before it (one stretch
    between two compactions each, not all the history before it)."""
    for message in sorted(messages):
        window = session.window_at(message, exact=False)  # judged by its text, not shown: estimates do
        yield message, window_key(window, session.accounting), window


class CollectingCache(AuditCache):
    """A fork's cache: what the process remembered before it forked, and no persistent cache (its
    database connection belongs to the parent); what it audits is kept to be sent back and remembered there
    (``remember_sent``)."""

    def __init__(self) -> None:
        super().__init__(None)
        self.collected: list[tuple[bytes, dict[str, tuple[Status, Status]], dict[str, list[str]], dict[str, Any]]] = []

    def put(self, key: bytes, statuses: dict[str, tuple[Status, Status]], lost_items: dict[str, list[str]],
            forensics: dict[str, Any]) -> None:
        self.collected.append((key, statuses, lost_items, forensics))


def remember_sent(cache: AuditCache, collected: list) -> None:
    """What a fork's ``CollectingCache`` collected, remembered here as if audited here."""
    for key, statuses, lost, facts in collected:
        cache.put(key, statuses, lost, facts)


def _split_point(session: Session, jobs: list[PairJob]) -> int:
    """Where to cut the jobs so that both halves take about as long: a pair costs about the entries since the
    compaction before it, which its window before holds (the text read) and which are replayed to reach it
    (``_windows``: from the last pair's window after, or the kept replay nearest before it if further on)."""
    costs = []
    for n, (message, _, _) in enumerate(jobs):
        replayed_from = max(jobs[n - 1][1] if n else 0, session.kept_replay_before(message - 1))
        costs.append(message - replayed_from)
    total, running = sum(costs), 0
    for n, cost in enumerate(costs):
        running += cost
        if 2 * running >= total:
            return min(n + 1, len(jobs) - 1)
    return len(jobs) // 2


def _split_with_a_fork(session: Session, jobs: list[PairJob], cache: AuditCache, from_checkpoints: bool
                       ) -> dict[tuple[int, int], PairResult]:
    split = _split_point(session, jobs)
    mine, theirs = jobs[:split], jobs[split:]

    def second_half() -> tuple[dict[tuple[int, int], PairResult], list]:
        collecting = CollectingCache()
        # Its windows made as the parent would make them (a checkpoint may hold older estimates of the
        # same blocks than a new replay, and the forensics report a summary's tokens): the same results.
        return _results(session, theirs, collecting, from_checkpoints), collecting.collected

    results, (pairs, collected) = second_core.both_halves(lambda: _results(session, mine, cache, from_checkpoints), second_half)
    remember_sent(cache, collected)
    results.update(pairs)
    return results
