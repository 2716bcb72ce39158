"""A session's entries, the settled ones kept packed: a list to everything that reads them.

A message as Python objects (an Entry, its blocks, their list, its ints and
strings) costs about 1 KB; a Codex rollout of 1 GB holds half a million of
them. Entries no parser will change again are therefore *frozen*: packed (as
they leave memory as objects, see below), a batch of BATCH at a time, into one ``marshal`` blob of their plain-data form
(``entry_codec``: some 150 to 220 bytes a message, texts already released, what
people and the model wrote kept), deflated in the zlib format at the fastest
level: a third of that, for 0.25 s per 200 MB packed with zlib's own deflate, and
a fifth of the time a batch takes to unpack (the 1 GB Codex rollout's store:
153 MB → about 52). ISA-L's deflate (``isal``), where it is installed, packs
three times and unpacks two and a half times as fast, to the same size or
less, in the same format: a saved index reads back with either. Reading
one unpacks its batch; the batches read most recently stay unpacked
(CACHED_BATCHES), so walking the entries in order unpacks each batch once.
A session of up to UNPACKED_ALL_BATCHES batches keeps every batch it unpacks:
the open, the rules, the audit and the snapshot each walk all the entries,
and for a session of that size the objects cost less memory (0.7–1 KB a
message, about 120 MB at most) than unpacking them again costs time (on a
generated 200 MB Codex rollout, a cold ``export`` takes 15 % longer with the
batches unpacked at each walk). A log being read tells the store how many
entries it will probably hold (``expect``), so that one bound to go past that
keeps few batches from the start rather than all of them until it does.
A frozen batch is packed only when it must be: when it leaves the unpacked
ones, or is saved (``packed_batches``). A session whose batches all stay
unpacked and that is not saved (read with no caches, or too small to be
indexed) is never packed: on the generated 200 MB Codex rollout (137,000
messages), 0.27 s of its open.

The entries after the frozen ones are held as they are: parsers append to them
and may still change the last few (``LineParser.settled_before``). An entry
read from a frozen batch may be a copy: changing it may change nothing stored,
which is why only settled entries are frozen (``thaw`` first to change one).

Thread-safe: workers read while the follower appends and freezes.
"""

from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from ctxtop.context.store.entry_codec import decode_entry, encode_entry
from ctxtop.context.store.lazy_text import LogTexts
from ctxtop.parsers.model import Entry, EntryList

try:
    from isal import isal_zlib as deflate
except ImportError:  # no wheel for this machine (a dependency only where there is one: pyproject.toml)
    import zlib as deflate  # type: ignore[no-redef]

BATCH = 256
# Unpacked batches kept: the window on screen, a replay's neighbourhood (~8k entries).
CACHED_BATCHES = 32
# Up to this many batches (163,840 messages: a Claude Code session of ~700 MB, a Codex one of ~240 MB), none is packed away again.
UNPACKED_ALL_BATCHES = 640


class EntryStore(EntryList):
    """The list of a session's entries; those before ``frozen`` are packed."""

    def __init__(self, entries: Iterable[Entry] = (), texts: LogTexts | None = None) -> None:
        self.texts = texts  # reads back the released texts of unpacked entries
        # Batch k holds entries k*BATCH ... (k+1)*BATCH - 1; None until it is packed, while it is among the
        # unpacked ones (``_trim`` packs a batch as it leaves them).
        self._packed: list[bytes | None] = []
        self._held: list[Entry] = list(entries)  # the entries after the packed ones
        self._unpacked: OrderedDict[int, list[Entry]] = OrderedDict()
        self._expected = 0  # how many entries the store will probably hold (``expect``)
        self._lock = threading.Lock()

    @property
    def frozen(self) -> int:
        """How many entries, from the first, are packed."""
        return len(self._packed) * BATCH

    def __len__(self) -> int:
        return self.frozen + len(self._held)

    # --- reading -------------------------------------------------------------------------------
    @overload
    def __getitem__(self, position: int) -> Entry: ...
    @overload
    def __getitem__(self, position: slice) -> list[Entry]: ...

    def __getitem__(self, position: int | slice) -> Entry | list[Entry]:
        with self._lock:
            if isinstance(position, slice):
                return self._slice(*position.indices(len(self)))
            size = len(self)
            if position < 0:
                position += size
            if not 0 <= position < size:
                raise IndexError("entry position out of range")
            return self._at(position)

    def _slice(self, start: int, stop: int, step: int) -> list[Entry]:
        if step != 1:
            return [self._at(i) for i in range(start, stop, step)]
        entries: list[Entry] = []
        frozen = self.frozen
        while start < min(stop, frozen):  # a batch at a time, copied as slices
            number, first = divmod(start, BATCH)
            last = min(stop - number * BATCH, BATCH)
            entries += self._batch(number)[first:last]
            start = number * BATCH + last
        if start < stop:
            entries += self._held[start - frozen : stop - frozen]
        return entries

    def _at(self, position: int) -> Entry:
        frozen = self.frozen
        if position >= frozen:
            return self._held[position - frozen]
        return self._batch(position // BATCH)[position % BATCH]

    def _batch(self, number: int) -> list[Entry]:
        batch = self._unpacked.get(number)
        if batch is not None:
            self._unpacked.move_to_end(number)
            return batch
        batch = [decode_entry(item, self.texts) for item in unpacked(self._packed_batch(number))]
        self._keep_unpacked(number, batch)
        return batch

    def _keep_unpacked(self, number: int, batch: list[Entry]) -> None:
        self._unpacked[number] = batch
        self._trim()

    def _trim(self) -> None:
        batches = max(len(self._packed), self._expected // BATCH)
        kept = CACHED_BATCHES if batches > UNPACKED_ALL_BATCHES else UNPACKED_ALL_BATCHES
        while len(self._unpacked) > kept:
            oldest = next(iter(self._unpacked))
            self._packed_batch(oldest)  # (packed as it leaves the unpacked batches, if it was not yet)
            del self._unpacked[oldest]

    def _packed_batch(self, number: int) -> bytes:
        """Frozen batch ``number``, packed: now, from its unpacked entries, if it was not yet (and kept so)."""
        blob = self._packed[number]
        if blob is None:
            blob = self._packed[number] = packed(self._unpacked[number])
        return blob

    def expect(self, entries: int) -> None:
        """The store will probably hold about ``entries`` (a log's entries so far, scaled to its size):
        past UNPACKED_ALL_BATCHES, it keeps only the last CACHED_BATCHES unpacked from now on."""
        with self._lock:
            self._expected = entries
            self._trim()

    def __iter__(self) -> Iterator[Entry]:
        # A batch at a time under the lock, so a freeze between two batches moves nothing under us.
        position = 0
        while True:
            with self._lock:
                frozen = self.frozen
                if position < frozen:
                    chunk = self._batch(position // BATCH)[position % BATCH :]
                else:
                    chunk = self._held[position - frozen :]
            if not chunk:
                return
            yield from chunk
            position += len(chunk)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EntryStore({len(self)} entries, {self.frozen} frozen)"

    # --- growing and changing ---------------------------------------------------------------
    def append(self, entry: Entry) -> None:
        with self._lock:
            self._held.append(entry)

    def __delitem__(self, position: slice) -> None:
        """Only ``del entries[n:]`` (a history rewound to message ``n``): what comes after is gone."""
        if not isinstance(position, slice) or position.stop is not None or position.step not in (None, 1):
            raise TypeError("an EntryStore only drops its tail: del entries[n:]")
        with self._lock:
            start = position.indices(len(self))[0]
            self._thaw(start)
            del self._held[start - self.frozen :]

    def freeze(self, stop: int) -> None:
        """Freeze the entries before ``stop`` (whole batches only): none of them will change again. They stay
        unpacked, the same objects, and are packed when they leave the unpacked batches (``_trim``)."""
        with self._lock:
            while (len(self._packed) + 1) * BATCH <= stop and len(self._held) >= BATCH:
                batch, number = self._held[:BATCH], len(self._packed)
                self._packed.append(None)
                del self._held[:BATCH]
                self._keep_unpacked(number, batch)

    def thaw(self, start: int) -> None:
        """Hold the entries from ``start`` on as objects again, so that changing them changes the store."""
        with self._lock:
            self._thaw(start)

    def _thaw(self, start: int) -> None:
        first = max(0, start) // BATCH
        if first >= len(self._packed):
            return
        thawed = [entry for number in range(first, len(self._packed)) for entry in self._batch(number)]
        for number in range(first, len(self._packed)):
            self._unpacked.pop(number, None)
        del self._packed[first:]
        self._held[:0] = thawed

    # --- packed form, for the saved index --------------------------------------------------------
    def packed_batches(self) -> Iterator[bytes]:
        """Every entry, as ``packed`` blobs of up to BATCH entries (frozen batches as they are)."""
        with self._lock:  # (kept packed from here on: a session saved once is saved again as it grows)
            frozen, held = [self._packed_batch(number) for number in range(len(self._packed))], list(self._held)
        yield from frozen
        for start in range(0, len(held), BATCH):
            yield packed(held[start : start + BATCH])

    def adopt(self, blob: bytes, count: int) -> None:
        """Take the ``count`` entries packed as ``blob`` (from a saved index) as the next entries. A whole
        batch stays packed, unread until an entry of it is (a warm open decodes only what it looks at);
        a part of one is decoded and held."""
        with self._lock:
            if count == BATCH and not self._held:
                self._packed.append(blob)
            else:
                self._held.extend(decode_entry(item, self.texts) for item in unpacked(blob))


def packed(entries: Iterable[Entry]) -> bytes:
    """Entries as one blob: their ``encode_entry`` tuples, marshalled, compressed."""
    return deflate.compress(marshal.dumps([encode_entry(e) for e in entries]), 1)


def unpacked(blob: bytes) -> list:
    """The ``encode_entry`` tuples of a ``packed`` blob (``decode_entry`` makes each an Entry again)."""
    return marshal.loads(deflate.decompress(blob))
