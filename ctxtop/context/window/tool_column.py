"""Where a session's tool calls and results are, as columns: per-tool totals over the log without reading it again.

Totalling the tools over everything the log holds walked every block of every
entry: in a packed session of 200,000 messages that unpacks them all (seconds,
at every export). The column keeps a row per tool call or result, filled as the
entries are counted: the entry's position and the block's index (its tokens are
read from the accounting when totalled, so a count made exact since is the
exact one), the tool's name (numbered, in a table of the names seen), and the
call id (a call's, to name the results that answer it; a result's, when it does
not name its tool itself). Ids are kept as 64-bit XXH3 hashes, not strings: a
session's ids cost 8 bytes each, not a hundred; two different ids of one session
hash alike with a chance of about 10^-9 even at a million calls.

The totals are those of ``tool_totals.tally`` over the same blocks, in the same order.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence

import xxhash

from ctxtop.context.window.accounting import Accounting
from ctxtop.context.window.tool_totals import UNKNOWN_TOOL, ToolTotal
from ctxtop.parsers.model import TOOL_CALL, TOOL_RESULT, Entry

NO_ID = 0
NO_NAME = -1  # a result that does not name its tool


def _id_of(tool_id: str | None) -> int:
    return xxhash.xxh3_64_intdigest(tool_id.encode("utf-8", "surrogatepass")) if tool_id else NO_ID


class ToolColumn:
    """The tool calls and results of a session's counted entries, in log order."""

    def __init__(self) -> None:
        self._positions = array("q")  # ascending
        self._blocks = array("i")
        self._results = bytearray()  # 1: a result, 0: a call
        self._names = array("i")  # into _name_table, or NO_NAME
        self._ids = array("Q")
        self._name_table: list[str] = []
        self._name_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._positions)

    def update(self, entries: Sequence[Entry], start: int, stop: int) -> None:
        """The entries from position ``start`` to ``stop`` were counted (again): their rows replace any kept."""
        cut = bisect_left(self._positions, start)
        for column in (self._positions, self._blocks, self._results, self._names, self._ids):
            del column[cut:]
        for position, entry in enumerate(entries[start:stop], start):
            for index, block in enumerate(entry.blocks):
                category = block.category
                if category == TOOL_CALL:
                    self._add(position, index, 0, self._code(block.tool_name or UNKNOWN_TOOL), block.tool_id)
                elif category == TOOL_RESULT:
                    self._add(position, index, 1, self._code(block.tool_name) if block.tool_name else NO_NAME, block.tool_id)

    def _add(self, position: int, index: int, result: int, name: int, tool_id: str | None) -> None:
        self._positions.append(position)
        self._blocks.append(index)
        self._results.append(result)
        self._names.append(name)
        self._ids.append(_id_of(tool_id))

    def _code(self, name: str) -> int:
        code = self._name_codes.get(name)
        if code is None:
            code = self._name_codes[name] = len(self._name_table)
            self._name_table.append(name)
        return code

    def totals(self, accounting: Accounting, stop: int) -> dict[str, ToolTotal]:
        """Per tool over the entries before position ``stop``, compacted away or not (as ``tally`` gives them)."""
        end = bisect_left(self._positions, stop)
        table = self._name_table
        totals: dict[str, ToolTotal] = {}
        names: dict[int, int] = {}  # call id → name code, the last call's
        results: list[tuple[int, int, int]] = []  # (name code, tokens, id) of each result, in order
        tokens_of_rows = accounting.tokens_of_blocks(self._positions[:end], self._blocks[:end])
        for tokens, result, name, tool_id in zip(tokens_of_rows, self._results[:end], self._names[:end], self._ids[:end]):
            if result:
                results.append((name, tokens, tool_id))
                continue
            if tool_id != NO_ID:
                names[tool_id] = name
            total = totals.get(table[name])
            if total is None:
                total = totals[table[name]] = ToolTotal()
            total.calls += 1
            total.call_tokens += tokens
        for name, tokens, tool_id in results:
            if name == NO_NAME:  # named through its call, after all calls: a result may come before its call's last line
                name = names.get(tool_id, NO_NAME) if tool_id != NO_ID else NO_NAME
            tool = table[name] if name != NO_NAME else UNKNOWN_TOOL
            total = totals.get(tool)
            if total is None:
                total = totals[tool] = ToolTotal()
            total.results += 1
            total.result_tokens += tokens
        return totals

    # --- saved form, for the session's index ------------------------------------------------------
    def columns(self) -> tuple:
        return (self._positions.tobytes(), self._blocks.tobytes(), bytes(self._results), self._names.tobytes(), self._ids.tobytes(),
                list(self._name_table))

    @classmethod
    def from_columns(cls, saved: tuple) -> ToolColumn:
        positions, blocks, results, names, ids, table = saved
        column = cls()
        column._positions.frombytes(positions)
        column._blocks.frombytes(blocks)
        column._results[:] = results
        column._names.frombytes(names)
        column._ids.frombytes(ids)
        if not len(column._positions) == len(column._blocks) == len(column._results) == len(column._names) == len(column._ids):
            raise ValueError("a saved tool column whose columns disagree")
        column._name_table = list(table)
        column._name_codes = {name: code for code, name in enumerate(table)}
        return column
