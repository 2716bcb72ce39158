"""A parsed session with its token accounting: the window at any message."""

from __future__ import annotations

import os
import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ctxtop import parsers
from ctxtop.context.store import session_index
from ctxtop.context.store.entry_store import EntryStore
from ctxtop.context.store.lazy_text import LogTexts
from ctxtop.context.store.source import (
    SourceError,
    check_log,
    database_format,
    read_chunks,
    read_head,
    read_log,
    read_opencode_db,
    read_tree,
    split_sample,
    tree_names,
)
from ctxtop.context.store.token_cache import TokenCache
from ctxtop.context.window.accounting import Accounting
from ctxtop.context.window.harness import HarnessPrefix
from ctxtop.context.window.limits import window_limit
from ctxtop.context.window.replay import Replay, Window, WindowBlock, first_call_prefix
from ctxtop.context.window.replay_state import SavedReplay, restored_replay, saved_replay
from ctxtop.context.window.subagents import SubagentScan
from ctxtop.context.window.timeline import Timeline, TimelineView, point_of
from ctxtop.context.window.tokens import DEFAULT_ENCODING, TokenCounter
from ctxtop.context.window.tool_column import ToolColumn
from ctxtop.parsers import registry
from ctxtop.parsers.base import LineParser, Parser
from ctxtop.parsers.model import Block, Entries


@dataclass(slots=True, frozen=True)
class CompactionEvent:
    message: int
    kind: str
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    timestamp: str | None
    opaque: bool = False


# Entries counted between two progress reports, at least.
COUNT_STEP = 2000
# JSON Lines logs are read, parsed and counted this many bytes at a time.
STREAM_CHUNK_BYTES = 4 << 20
# Enough of a log's head to tell its format (a first record can be big).
DETECT_HEAD_BYTES = 4 << 20
# What one step of refining the history tokenizes (refine_step), by the estimates it replaces (about
# 1 MB of text, a tenth of a second): sized without reading a text twice.
REFINE_STEP_TOKENS = 1 << 18
REFINE_STEP_BLOCKS = 2048


def resolved_message(at: int, count: int) -> int | None:
    """``at`` (negative: counted from the end, -1 the last) as a message number of ``count`` messages, or None when
    there is no such message (0, or past either end): the one check every front end makes of a message asked for."""
    number = at if at > 0 else count + 1 + at
    return number if 1 <= number <= count else None


class Session:
    """Entries of one log plus what ``context`` computes from them."""

    def __init__(
        self,
        parser: Parser,
        *,
        path: str | None = None,
        counter: TokenCounter | None = None,
        window: int | None = None,
        progress: Callable[[float], None] | None = None,
        count: bool = True,
        harness: HarnessPrefix | None = None,
        estimate: bool = False,
    ) -> None:
        """``count=False``: the caller fills the accounting (from a saved index). ``harness``: the
        prefix inferred from a first call these entries do not hold (a log read from its last compaction).
        ``estimate``: texts the caches do not know are estimated, as for a whole log's history
        (``Accounting.estimate_history``), until a window is asked for exact."""
        self.parser = parser
        self.path = path
        self.counter = counter or TokenCounter(DEFAULT_ENCODING)
        self.window_override = window
        self.accounting = Accounting(self.counter, estimate_history=estimate)
        self.tools = ToolColumn()  # the tool calls and results of the counted entries (per-tool totals)
        self.subagents: SubagentScan | None = None  # sub-agent transcripts kept beside the log (Claude Code)
        self.texts: LogTexts | None = None  # set when big texts are released and read back from the log
        self._released_to = 0  # entries before this position had their big texts released
        self.from_index = 0  # bytes of the log taken from a saved index rather than parsed
        self.notices: list[str] = []  # what the user should hear about how it was read (a damaged index rebuilt)
        # A digest of the bytes a JSON Lines log was read from, once and whole (not followed): what its
        # entries are made of, known without looking at them (``audit.remembered``). None otherwise.
        self.read_digest: bytes | None = None
        self._checkpoints: list[Replay | SavedReplay] = []  # replays stopped just after a compaction, by position (window_at)
        # While a JSON Lines log is read: a replay kept up with the entries whose counts are final,
        # so that the window at the latest message needs no replay of the history (count_new).
        self._ahead: Replay | None = None
        self.history = Timeline()  # a point for each message _ahead has replayed
        self.replay_resets: list[int] = []  # where _ahead was sent back to, in order (a change before it)
        self._checkpoint_lock = threading.Lock()
        self._harness_seed = harness
        # The position of the log's first model call and the prefix it infers (``first_call_prefix``), once counted;
        # forgotten when counts up to it change.
        self._first_call: tuple[int, HarnessPrefix | None] | None = None
        entries = parser.entries if count else []
        step = max(COUNT_STEP, len(entries) // 50) if progress else len(entries)
        for stop in range(step, len(entries) + step, step or 1):
            self._count(self.accounting.counted, stop)
            if progress:
                progress(min(1.0, stop / len(entries)))
        if count and entries:
            # Replayed once now, so that the latest window and the timeline need no replay of the
            # history. A document is read whole: all of it is settled.
            settled = min(parser.settled_before(), self.accounting.calls_done) if isinstance(parser, LineParser) else len(entries)
            self._replay_settled(settled)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        *,
        format: str | None = None,
        encoding: str = DEFAULT_ENCODING,
        window: int | None = None,
        live: bool = False,
        progress: Callable[[str, float], None] | None = None,
        on_read: Callable[[Session, float], None] | None = None,
    ) -> Session:
        """Read, detect, parse and count a log. Raises SourceError / UnknownFormat / EncodingUnavailable.

        ``live``: the log is still being written, so a last line without its
        newline is left for later rather than counted as torn. ``progress(phase,
        fraction)`` is called while reading JSON Lines ("read": parsed and counted
        together), or else while parsing ("parse") and counting ("count").
        ``on_read(session, fraction)``: called as a JSON Lines log is read, after each part of it,
        with the session read so far (to start work on it while the read goes on).
        """
        counter = TokenCounter(encoding, store=TokenCache.default(encoding))
        path, sample = split_sample(path)
        if Path(path).is_dir():
            registry.one_session(sample, "a folder")
            return cls._open_folder(path, format, counter, window)
        if (kept_in := database_format(path)) is not None:
            registry.one_session(sample, f"an {kept_in} database")
            parser = registry.parse_tree(read_opencode_db(path), format or kept_in)
            return cls(parser, path=str(Path(path)), counter=counter, window=window)
        line_format = cls._line_format(path, format)
        if line_format is not None:
            registry.one_session(sample, f"a {line_format} log")
            session = cls._open_lines(path, line_format, counter, window, live, progress, on_read)
        else:
            session = cls._open_whole(path, format, sample, counter, window, live, progress)
        if counter.store is not None:
            counter.store.maybe_prune()
        if format is not None:
            session._check_forced_format(path, format)
        session.look_for_subagents()
        return session

    def _check_forced_format(self, path: str | os.PathLike, format: str) -> None:
        """A log read with a format named by the user, followed or read whole (the TUI replaying the demo,
        say): a log still being written may hold only bookkeeping so far, but one whose lines the parser
        rejected, with no message read, is in another format: say so rather than show nothing."""
        d = self.parser.diagnostics
        if self.message_count or not (d.malformed_lines or d.unknown_records):
            return
        raise parsers.UnknownFormat(f"{path}: no message could be read as {format} "
                                    f"({d.malformed_lines} malformed line(s), {d.unknown_records} unknown record(s))")

    @classmethod
    def empty(cls, like: Session, path: str | os.PathLike) -> Session:
        """A session with no entries yet, in the format of ``like``: its log was emptied while followed."""
        return cls(type(like.parser)(), path=str(Path(path)), counter=like.counter, window=like.window_override)

    def look_for_subagents(self) -> None:
        """Count the sub-agent transcripts kept beside the log (Claude Code), whichever way it was read."""
        # A sub-agent's own transcript has none: its siblings beside it (2.0.x) are the session's.
        parser_type = type(self.parser)
        # Sub-agent transcripts are read by the log's own parser, line by line (Claude Code's).
        if (self.path is not None and issubclass(parser_type, LineParser) and parser_type.subagents_beside
                and not Path(self.path).name.startswith("agent-")):
            self.subagents = SubagentScan(self.path, self.parser.meta.session_id, self.counter, parser_type, self.entries)

    @staticmethod
    def _line_format(path: str | os.PathLike, format: str | None) -> type[LineParser] | None:
        """The JSON Lines parser for this log, known from ``format`` or from its head; None for other formats."""
        if format is not None:
            chosen = registry.PARSERS.get(format)
        else:
            try:
                chosen = registry.PARSERS[registry.detect(read_head(path, DETECT_HEAD_BYTES))]
            except parsers.UnknownFormat:
                return None  # maybe a document whose head alone does not tell: read whole below
        return chosen if isinstance(chosen, type) and issubclass(chosen, LineParser) else None

    @classmethod
    def _open_lines(cls, path: str | os.PathLike, parser_type: type[LineParser], counter: TokenCounter, window: int | None,
                    live: bool, progress: Callable[[str, float], None] | None,
                    on_read: Callable[[Session, float], None] | None = None) -> Session:
        """A JSON Lines log read in chunks: each is parsed and counted, then its big texts are let go.

        Memory follows the entries, not the file: the bytes of a chunk are dropped
        once parsed, and a counted text is read back from the log when needed.
        A saved index of the log (``session_index``) stands for the bytes it covers.
        """
        texts = LogTexts(path, parser_type)
        size = check_log(path).st_size
        index = session_index.index_path(path, parser_type.name, counter.encoding_name) if counter.store is not None else None
        loaded, notice = session_index.load(index, path, parser_type, counter.encoding_name, texts) if index and index.exists() else (None, None)
        if loaded is not None:
            session = cls(loaded.parser, path=str(Path(path)), counter=counter, window=window, count=False)
            session.accounting.estimate_history = True
            session.accounting.restore(loaded.accounting)
            try:
                session.restore_derived(loaded.derived)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError):
                # Saved so by a bug, not the disk (the index is checksummed): derived afresh, the replay below.
                session.tools.update(session.entries, 0, session.accounting.counted)
            session._released_to = loaded.released_to
            session.from_index = loaded.indexed
            parser = loaded.parser
            base, line, digest = loaded.indexed, parser.resume_line, loaded.digest
        else:
            parser = parser_type()
            parser.entries = EntryStore(texts=texts)
            session = cls(parser, path=str(Path(path)), counter=counter, window=window)
            session.accounting.estimate_history = True  # a whole log: its history by estimates, its windows shown exact
            base, line, digest = 0, 1, session_index.new_digest()
        session.texts = texts
        if notice:
            session.notices.append(notice)
        pending, unfinished = b"", []
        for chunk in read_chunks(path, STREAM_CHUNK_BYTES, start=base):
            if chunk.find(b"\n") == -1:
                # A line longer than a chunk: its pieces wait for its end, joined once then (joining
                # them at every chunk would copy a 200 MB line fifty times).
                unfinished.append(chunk)
                continue
            data = b"".join([pending, *unfinished, chunk]) if pending or unfinished else chunk
            unfinished.clear()
            cut = data.rfind(b"\n")
            parser.feed(data, 0, line, final=False, stop=cut + 1, base=base)
            digest.update(memoryview(data)[: cut + 1])
            line, base, pending = parser.resume_line, base + cut + 1, data[cut + 1 :]
            session.count_new(settled_only=True)
            if isinstance(parser.entries, EntryStore) and base:
                parser.entries.expect(len(parser.entries) * size // base)
            if progress:
                progress("read", min(1.0, base / size))
            if on_read:
                on_read(session, min(1.0, base / size))
        pending = b"".join([pending, *unfinished]) if unfinished else pending
        session.count_new()
        # Indexed up to the last complete line only: a last line still being written (or torn) is
        # read each time, never saved as it was half-way (nor as a malformed line).
        if index is not None and size >= session_index.INDEX_MIN_BYTES and (loaded is None or base > loaded.indexed):
            try:
                session_index.save(index, parser, session.accounting.saved(), session.saved_derived(), session._released_to, base,
                                   digest.digest(), counter.encoding_name)
            except (OSError, ValueError):
                pass  # no index (a full disk, a value marshal cannot hold): the next open reads the log again
        parser.resume_offset = parser.feed(pending, 0, line, final=not live, base=base)
        session.count_new()
        if not live:
            digest.update(pending)
            session.read_digest = digest.digest()
        return session

    def count_new(self, settled_only: bool = False) -> None:
        """Count the entries added or changed since the last count, then release their big texts.

        ``settled_only``: leave the last entry uncounted, as the next line may still add to it.
        The last entry keeps its texts either way, for the same reason.
        """
        entries = self.entries
        start = min(self.accounting.counted, len(entries))
        touched = self.parser.take_touched()
        if touched is not None:
            start = min(start, touched)
            self._released_to = min(self._released_to, touched)
        stop = max(start, len(entries) - 1) if settled_only else len(entries)
        self._forget_checkpoints_after(self._count(start, stop))
        if self.texts is not None:
            settled = max(self._released_to, min(stop, len(entries) - 1))
            self.texts.release(entries, self._released_to, settled)
            self._released_to = settled
        parser = self.parser
        # (A document is read whole: all of it is settled.)
        settled = min(self._released_to, parser.settled_before() if isinstance(parser, LineParser) else len(entries))
        if isinstance(entries, EntryStore):
            entries.freeze(settled)
        # Replayed as they are read, so the latest window needs no replay of the whole history
        # (nor unpacking it). Only up to the last model call that reported usage: the counts of
        # a call still open change when it does, and the replay past them would be dropped.
        self._replay_settled(min(settled, self.accounting.calls_done))

    def _count(self, start: int, stop: int) -> int:
        """Count the entries from ``start`` to ``stop`` (again); the first position whose counts may have changed."""
        changed = self.accounting.update(self.entries, start, stop)
        self.tools.update(self.entries, start, stop)
        return changed

    @classmethod
    def _open_whole(cls, path: str | os.PathLike, format: str | None, sample: int, counter: TokenCounter,
                    window: int | None, live: bool, progress: Callable[[str, float], None] | None) -> Session:
        """A log parsed from all its bytes at once (JSON documents, zip archives)."""
        data = read_log(path)
        try:
            parser = parsers.parse(data, format, final=not live, sample=sample,
                                   progress=(lambda f: progress("parse", f)) if progress else None)
        except parsers.UnknownFormat as exc:
            raise parsers.UnknownFormat(f"{path}: {exc}") from None
        finally:
            if hasattr(data, "close"):
                data.close()
        return cls(parser, path=str(Path(path)), counter=counter, window=window,
                   progress=(lambda f: progress("count", f)) if progress else None)

    @classmethod
    def _open_folder(cls, path: str | os.PathLike, format: str | None, counter: TokenCounter, window: int | None) -> Session:
        """A session kept as a folder of files (Cline tasks, OpenHands event directories)."""
        if format is None and registry.detect_tree(tree_names(path)) is None:
            raise SourceError(f"{path}: a folder, and not one ctxtop knows as a session (pass a session file, or see `ctxtop formats`)")
        try:
            parser = registry.parse_tree(read_tree(path), format)
        except parsers.UnknownFormat as exc:
            raise parsers.UnknownFormat(f"{path}: {exc}") from None
        return cls(parser, path=str(Path(path)), counter=counter, window=window)

    # --- basic facts -----------------------------------------------------------
    @property
    def entries(self) -> Entries:
        return self.parser.entries

    @property
    def format(self) -> str:
        return self.parser.name

    @property
    def message_count(self) -> int:
        return len(self.parser.entries)

    @property
    def model(self) -> str | None:
        return self.parser.meta.model

    def limit(self) -> tuple[int, str]:
        """The window size in tokens and where that number came from."""
        if self.window_override:
            return self.window_override, "--window"
        if self.parser.meta.context_window:
            return self.parser.meta.context_window, "log"
        return window_limit(self.model)

    def clamp(self, message: int | None) -> int:
        """A message index within the session (the latest when None)."""
        if message is None or message > self.message_count:
            return self.message_count
        if message < 0:
            return max(0, self.message_count + 1 + message)
        return message

    # --- the window --------------------------------------------------------------
    def window_at(self, message: int | None = None, *, exact: bool = True) -> Window:
        """The window after ``message``, replayed from the last compaction before it.

        Every replay leaves a copy of its state just after each compaction it
        passes (a small window: what the compaction kept), so stepping through a
        big session replays one stretch between compactions, not all before it.
        ``exact``: every text in it counted with the tokenizer (the history of a whole log read goes
        by estimates, ``window.estimate``); False for windows only judged, never shown (the audit's).
        """
        at = self.clamp(message)
        replay = self._replay_before(at)
        for _ in replay.run(at):
            if replay.compacted:
                self._keep_checkpoint(replay.fork())
        return self._made_exact(replay.window) if exact else replay.window

    def _made_exact(self, window: Window) -> Window:
        """``window`` with the estimated counts of its blocks replaced by exact ones (a window of its own:
        replays fork their windows, and blocks are replaced, never changed, as Window.clear does).

        Only the blocks after ``window.exact_to`` are looked at, and what is learnt is handed back to
        the replay the session keeps ahead, so that the next window forked from it (a followed log's
        next poll) starts exact: a poll costs what it appended, not the whole window."""
        accounting = self.accounting
        if not accounting.estimate_history:
            return window
        start = window.exact_to
        logged = _logged_blocks(window, start)
        accounting.make_exact([(item.entry.index - 1, item.position, item.block) for _, item in logged])
        # Also blocks made exact by an earlier call, whose estimate a kept replay still holds.
        self._take_counts(window, logged)
        window.exact_to = len(window.blocks)
        self._hand_back(window)
        return window

    def _take_counts(self, window: Window, logged: list[tuple[int, WindowBlock]]) -> None:
        """Give the blocks ``logged`` (index in ``window``, block) the counts the accounting holds now."""
        accounting = self.accounting
        for n, item in logged:
            tokens = accounting.of(item.entry.index - 1)[item.position]
            if tokens != item.tokens:
                window.totals[item.category].tokens += tokens - item.tokens
                window.blocks[n] = replace(item, tokens=tokens)

    def _hand_back(self, window: Window) -> None:
        """Give the exact blocks of ``window`` to the replay kept ahead, as far as its own first blocks
        are the same (entry, block, cleared or not)."""
        with self._checkpoint_lock:
            if self._ahead is None:
                return
            kept = self._ahead.window
            n, end = kept.exact_to, min(len(kept.blocks), len(window.blocks))
            while n < end:
                theirs, mine = kept.blocks[n], window.blocks[n]
                if theirs is not mine:
                    if theirs.entry is not mine.entry or theirs.position != mine.position or theirs.cleared != mine.cleared:
                        break  # the windows part here (a compaction, a clearing): the rest is not known exact
                    kept.totals[theirs.category].tokens += mine.tokens - theirs.tokens
                    kept.blocks[n] = mine
                n += 1
            kept.exact_to = n

    # --- the history made exact, a step at a time (the TUI, when idle) ------------------------------
    def refine_step(self, max_tokens: int | None = None) -> bool:
        """Tokenize the next estimated counts of the history, about ``max_tokens`` of them by their estimates
        (REFINE_STEP_TOKENS; a text bigger than that alone); True when no estimate is left: then what is
        appended later is counted exactly too, and ``replay_again`` makes the timeline exact."""
        accounting, entries = self.accounting, self.entries
        max_tokens = max_tokens or REFINE_STEP_TOKENS
        chosen: list[tuple[int, int, Block]] = []
        tokens, last, blocks = 0, -1, []
        for position, index in accounting.rough_positions(REFINE_STEP_BLOCKS):
            if position != last:  # (a packed entry is unpacked once for its blocks)
                last, blocks = position, entries[position].blocks
            chosen.append((position, index, blocks[index]))
            tokens += accounting.of(position)[index]
            if tokens >= max_tokens:
                break
        accounting.make_exact(chosen)
        if accounting.rough_blocks:
            return False
        accounting.estimate_history = False  # a followed log's new lines: a few texts, counted as they come
        return True

    def replay_again(self) -> None:
        """Replay the history read so far from its start, for its timeline and its kept replays: after its
        counts changed (``refine_step``). Done aside and swapped in, so a window asked for meanwhile is not held up."""
        with self._checkpoint_lock:
            stop = self._ahead.position if self._ahead is not None else 0
        self._first_call = None  # (inferred from the counts, which changed)
        replay, history = self.new_replay(), Timeline()
        checkpoints: list[Replay | SavedReplay] = []
        self._run_recording(replay, stop, history, checkpoints.append)
        with self._checkpoint_lock:
            self._ahead, self.history, self._checkpoints = replay, history, checkpoints

    def window_rough(self, window: Window) -> bool:
        """Whether any count of ``window`` is an estimate from characters (one from ``window_at(exact=False)``)."""
        accounting = self.accounting
        if not accounting.rough_blocks:
            return False
        return any(accounting.rough(item.entry.index - 1, item.position) for item in window.blocks[window.exact_to :]
                   if item.position >= 0)

    def rough_before(self, message: int | None = None) -> bool:
        """Whether counts of the history up to ``message`` include estimates (timeline, per-tool totals)."""
        return self.accounting.rough_blocks > 0 and self.accounting.rough_through(self.clamp(message))

    def _replay_before(self, at: int) -> Replay:
        with self._checkpoint_lock:
            return self._continue(self._kept_before(at))

    def kept_replay_before(self, at: int) -> int:
        """Where ``replay_near(at)`` starts: the position of the kept replay nearest before ``at`` (or at it), or 0."""
        with self._checkpoint_lock:
            kept = self._kept_before(at)
            return kept.position if kept is not None else 0

    def _kept_before(self, at: int) -> Replay | SavedReplay | None:
        # (with the checkpoint lock held)
        checkpoints = self._checkpoints
        found = bisect_right(checkpoints, at, key=lambda r: r.position)
        nearest = checkpoints[found - 1] if found else None
        ahead = self._ahead
        if ahead is not None and ahead.position <= at and (nearest is None or ahead.position > nearest.position):
            nearest = ahead
        return nearest

    def replay_near(self, message: int) -> Replay:
        """A replay to go on from to ``message`` and past it: from the kept replay nearest before it (or at
        it), rather than from the first entry. Its window's blocks have the counts a replay from the first
        entry would give them now (a kept replay holds those of when it was kept), so what is judged from
        the windows it yields does not depend on where it started (the audit's second process)."""
        replay = self._replay_before(message)
        window = replay.window
        self._take_counts(window, _logged_blocks(window))
        return replay

    def _continue(self, replay: Replay | SavedReplay | None) -> Replay:
        """A copy of a kept replay to go on from, or a replay from the first entry (also for one kept before any
        entry: it was made before the first call was read, so without the prefix that call infers)."""
        return replay.fork() if replay is not None and replay.position > 0 else self.new_replay()

    def new_replay(self) -> Replay:
        """A replay from the first entry, with this format's rules; the windows before the first model call hold
        the system prompt and tools that call infers (a log read from its last compaction: those inferred before it)."""
        if self._harness_seed is not None:
            return Replay(self.entries, self.accounting, self._harness_seed, reasoning_kept=self.parser.reasoning_kept)
        return Replay(self.entries, self.accounting, reasoning_kept=self.parser.reasoning_kept,
                      first_call_prefix=self._prefix_of_first_call())

    def _prefix_of_first_call(self) -> HarnessPrefix | None:
        if self._first_call is None:
            entries = self.entries
            # A few entries in, as a rule; with no call counted yet, none is looked at (a followed log's may come).
            found = next((position for position in range(self.accounting.calls_done) if entries[position].usage is not None), None)
            if found is None:
                return None
            self._first_call = found, first_call_prefix(entries, self.accounting, found, reasoning_kept=self.parser.reasoning_kept)
        return self._first_call[1]

    def _replay_settled(self, stop: int) -> None:
        with self._checkpoint_lock:
            ahead = self._continue(self._ahead)
        self._run_recording(ahead, stop, self.history, self._keep_checkpoint)
        with self._checkpoint_lock:
            self._ahead = ahead

    @staticmethod
    def _run_recording(replay: Replay, stop: int, history: Timeline, keep: Callable[[Replay], None]) -> None:
        """Run ``replay`` to ``stop``, a timeline point for each message and a checkpoint after each compaction."""
        for window, entry in replay.run_with_entries(stop):
            history.add(window, entry)
            if replay.compacted:
                keep(replay.fork())

    def saved_derived(self) -> dict:
        """The replay kept ahead, the checkpoints, the timeline and the tool column as plain data (for a saved index)."""
        with self._checkpoint_lock:
            return {"ahead": None if self._ahead is None else saved_replay(self._ahead),
                    "checkpoints": [saved_replay(replay) for replay in self._checkpoints],
                    "timeline": self.history.columns(), "tools": self.tools.columns()}

    def restore_derived(self, saved: dict) -> None:
        """Take up what ``saved_derived`` gave, over the same entries and counts: what was
        replayed then is not replayed again. Raises ValueError (or KeyError...) when they do not fit."""
        history, tools = Timeline.from_columns(saved["timeline"]), ToolColumn.from_columns(saved["tools"])
        ahead = None if saved["ahead"] is None else self._restored(saved["ahead"])
        if len(history) != (ahead.position if ahead is not None else 0):
            raise ValueError("a saved timeline and replay of different lengths")
        with self._checkpoint_lock:
            self._ahead, self.history, self.tools = ahead, history, tools
            self._checkpoints = [SavedReplay(state, self._restored) for state in saved["checkpoints"]]

    def _restored(self, state: tuple) -> Replay:
        return restored_replay(state, self.entries, self.accounting, reasoning_kept=self.parser.reasoning_kept)

    def final_before(self) -> int:
        """Entries before this position, and their counts, will not change (unless a position is
        then added to ``replay_resets``): those the session has replayed as it read them."""
        with self._checkpoint_lock:
            return self._ahead.position if self._ahead is not None else 0

    def unchanged_before(self, position: int, resets_seen: int) -> bool:
        """Whether the entries before ``position`` are as they were when the session had made ``resets_seen``
        replay resets: none made since went back before it (what was final then still is, up to there)."""
        return all(reset >= position for reset in self.replay_resets[resets_seen:])

    def timeline(self) -> TimelineView:
        """A point for every message: those replayed as the log was read, then the rest (which
        may still change) replayed on a copy."""
        with self._checkpoint_lock:
            ahead = self._continue(self._ahead)
        settled = ahead.position
        rest = [point_of(window, entry) for window, entry in ahead.run_with_entries()]
        return self.history.view(settled, rest)

    def _keep_checkpoint(self, replay: Replay) -> None:
        with self._checkpoint_lock:
            checkpoints = self._checkpoints
            found = bisect_right(checkpoints, replay.position, key=lambda r: r.position)
            if not found or checkpoints[found - 1].position != replay.position:
                checkpoints.insert(found, replay)

    def _forget_checkpoints_after(self, position: int) -> None:
        """The entry at ``position`` changed: replays that went past it are out of date."""
        if self._first_call is not None and position <= self._first_call[0]:
            self._first_call = None  # the first call, or what came before it, changed
        with self._checkpoint_lock:
            self._checkpoints = [r for r in self._checkpoints if r.position <= position]
            if self._ahead is not None and self._ahead.position > position:
                self._ahead = self._checkpoints[-1].fork() if self._checkpoints else None
                back_to = self._ahead.position if self._ahead is not None else 0
                self.history.truncate(back_to)
                self.replay_resets.append(back_to)

    def reported_at(self, message: int | None = None) -> int | None:
        """The prompt size the log reports for the latest model call at or before ``message``.

        Right after a compaction with no model call since, the compaction's own
        post-compaction size (or None when it does not record one).
        """
        entries = self.entries
        for position in range(self.clamp(message) - 1, -1, -1):
            entry = entries[position]
            if entry.compaction is not None and entry.compaction.kind != "microcompact":
                return entry.compaction.post_tokens
            if entry.usage is not None:
                return entry.usage.prompt_tokens
        return None

    def compactions(self) -> list[CompactionEvent]:
        return [
            CompactionEvent(
                e.index,
                e.compaction.kind,
                e.compaction.trigger,
                e.compaction.pre_tokens,
                e.compaction.post_tokens,
                e.timestamp,
                e.compaction.opaque,
            )
            for e in self.entries
            if e.compaction is not None
        ]


def _logged_blocks(window: Window, start: int = 0) -> list[tuple[int, WindowBlock]]:
    """The blocks of ``window`` from index ``start`` that the accounting counts, with their index: each a
    block of an entry (not of a compaction's replacement), not cleared to a placeholder."""
    return [(n, item) for n, item in enumerate(window.blocks[start:], start) if item.position >= 0 and not item.cleared]
