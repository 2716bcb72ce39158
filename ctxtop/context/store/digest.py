"""The one digest ctxtop tells changed bytes from unchanged ones by: a log's indexed bytes, the index's own
checksum, a text's token-count key, a window's audit key, a fleet audit's log.

XXH3-128, not a cryptographic digest. Every cold open digests every block of a log and every open digests
all an index covers; XXH3 does 200 MB in about 0.013 s where BLAKE2b took 0.23 s (9% of a cold open of a
Codex rollout). Nothing keyed by it is worth forging: a text made to digest like another would only be given
the other's count, a log like another only reported as the other was. (Names made for people, such as a
rule's id, and the forks' checks keep BLAKE2b: they are short and not made per block.)
"""

from __future__ import annotations

from typing import Any

import xxhash


def new_digest() -> Any:
    """An empty digest: ``update`` it with bytes in order, ``digest()`` gives its 16 bytes."""
    return xxhash.xxh3_128()


def digest_of(data: bytes | bytearray | memoryview) -> bytes:
    """The 16-byte digest of ``data`` (``new_digest`` updated with it alone)."""
    return xxhash.xxh3_128_digest(data)
