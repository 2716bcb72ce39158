"""Directory-shaped logs: an agent that keeps one session as a folder of JSON files.

``context.source.read_tree`` reads the folder into ``{relative path: bytes}``;
the parsers here only see that mapping, so they stay pure like the others.
"""

from __future__ import annotations

from typing import Any

from ctxtop.parsers.base import Parser
from ctxtop.parsers.jsonl import DecodeError, loads

Tree = dict[str, bytes]


class TreeParser(Parser):
    """A parser for a session kept as several files."""

    def parse_tree(self, files: Tree) -> None:
        raise NotImplementedError

    def load(self, files: Tree, name: str) -> Any:
        """One file of the tree decoded as JSON; None (counted as malformed) when it is not."""
        try:
            return loads(files[name])
        except KeyError:
            return None
        except DecodeError as exc:
            self.malformed(0, f"{name}: not JSON ({exc})")
            return None
