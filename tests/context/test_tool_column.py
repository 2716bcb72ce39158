"""Per-tool totals over the whole log from the tool column: equal to tallying every block, without reading an entry."""

from __future__ import annotations

import pytest

from ctxtop.context.store.entry_store import EntryStore
from ctxtop.context.window.accounting import Accounting
from ctxtop.context.window.session import Session
from ctxtop.context.window.tokens import TokenCounter
from ctxtop.context.window.tool_column import ToolColumn
from ctxtop.context.window.tool_totals import UNKNOWN_TOOL, tally
from ctxtop.parsers.model import Block, Entry

from .test_lazy_text import follow_in_pieces, jsonl_logs


def walked(session: Session, stop: int):
    """The reference: every block of the entries before ``stop``, tallied in log order."""
    accounting = session.accounting
    return tally((block, accounting.of(position)[j]) for position, entry in zip(range(stop), session.entries)
                 for j, block in enumerate(entry.blocks))


def stops(n: int) -> list[int]:
    return sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1})


@pytest.mark.parametrize("log", jsonl_logs(), ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_the_column_totals_equal_a_tally_of_every_block_at_any_message_before_and_after_counts_are_made_exact(log):
    session = Session.open(log)
    n = session.message_count
    for stop in stops(n):
        assert session.tools.totals(session.accounting, stop) == walked(session, stop), stop
    session.window_at()  # the window shown is made exact: its tool blocks' counts change under the column
    while not session.refine_step():
        pass
    for stop in stops(n):
        assert session.tools.totals(session.accounting, stop) == walked(session, stop), stop


def test_totals_read_no_entry(small_batches, monkeypatch):
    from ctxtop.tui.demo import demo_path

    session = Session.open(demo_path())
    expected = walked(session, session.message_count)
    assert sum(total.calls for total in expected.values()) > 20
    monkeypatch.setattr(EntryStore, "__getitem__", lambda *_: pytest.fail("an entry was read"))
    monkeypatch.setattr(EntryStore, "__iter__", lambda *_: pytest.fail("the entries were walked"))
    assert session.tools.totals(session.accounting, session.message_count) == expected


def test_a_followed_log_keeps_its_column_current(tmp_path):
    from ctxtop.tui.demo import demo_path

    follower = follow_in_pieces(tmp_path / "s.jsonl", demo_path().read_bytes().splitlines(keepends=True), 40, 37)
    session = follower.session
    assert session.tools.totals(session.accounting, session.message_count) == walked(session, session.message_count)


def entry(index: int, *blocks: Block) -> Entry:
    return Entry(index, "assistant", list(blocks), offset=index * 100, line=index)


def test_results_are_named_as_a_tally_names_them():
    call, result = "tool_call", "tool_result"
    entries = [
        entry(1, Block(result, "early", tool_id="a")),  # before its call (a response merged later)
        entry(2, Block(call, "{}", tool_name="Read", tool_id="a"), Block(call, "{}", tool_id="b")),  # b: no name
        entry(3, Block(result, "x", tool_id="b"), Block(result, "y", tool_id="nobody"), Block(result, "z")),
        entry(4, Block(result, "named", tool_name="Grep", tool_id="a")),  # names itself: its own name wins
        entry(5, Block(call, "{}", tool_name="Edit", tool_id="a")),  # the same id again: the last call names it
        entry(6, Block(call, "{}", tool_name="Bash")),  # no id
    ]
    accounting = Accounting(TokenCounter())
    accounting.update(entries)
    column = ToolColumn()
    column.update(entries, 0, len(entries))
    for stop in range(len(entries) + 1):
        expected = tally((b, accounting.of(p)[j]) for p, e in enumerate(entries[:stop]) for j, b in enumerate(e.blocks))
        assert column.totals(accounting, stop) == expected, stop
    totals = column.totals(accounting, len(entries))
    assert totals["Edit"].results == 1 and totals[UNKNOWN_TOOL].results == 3 and totals[UNKNOWN_TOOL].calls == 1
    column.update(entries, 4, 5)  # counted again from entry 5 on, without the last: its rows go
    assert "Bash" not in column.totals(accounting, len(entries)) and len(column) == 8


def test_a_saved_column_reads_back_equal_and_a_damaged_one_is_refused():
    from ctxtop.tui.demo import demo_path

    session = Session.open(demo_path())
    again = ToolColumn.from_columns(session.tools.columns())
    n = session.message_count
    assert again.totals(session.accounting, n) == session.tools.totals(session.accounting, n)
    positions, *rest = session.tools.columns()
    with pytest.raises(ValueError):
        ToolColumn.from_columns((positions[:-8], *rest))
