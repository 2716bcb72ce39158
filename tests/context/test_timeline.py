"""The timeline kept as columns must give the points a replay from the start gives, and answer the chart's questions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.window.harness import FIRST_CALL, INFERRED, HarnessPrefix
from ctxtop.context.window.replay import CategoryTotal, Window
from ctxtop.context.window.session import Session
from ctxtop.context.window.timeline import ROWS, WIDTH, Timeline, TimelinePoint, point_of
from ctxtop.parsers.model import UNATTRIBUTED, Entry

from ..conftest import DATA
from .test_lazy_text import jsonl_logs

DOCUMENTS = [DATA / "openhands_condensation.json", DATA / "inspect_compaction.json", DATA / "openai_messages.json", DATA / "adk_session.json"]


@pytest.mark.parametrize("log", jsonl_logs() + DOCUMENTS, ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_every_point_equals_a_replay_from_the_start(log, small_batches):
    session = Session.open(log)
    fresh = [point_of(window, session.entries[window.at - 1]) for window in session.new_replay().run()]
    view = session.timeline()
    assert list(view) == fresh
    assert len(view) == session.message_count


def window_with(at: int, tokens: list[int]) -> Window:
    """A window whose timeline rows are ``tokens``: the counted categories, then the inferred prefix and
    the rest of what the log reports beyond them (a model call reporting the sum of all)."""
    counted, inferred = tokens[: len(ROWS) - 2], tokens[len(ROWS) - 2]
    totals = {name: CategoryTotal(count, 1) for name, count in zip(ROWS, counted)}
    totals[UNATTRIBUTED] = CategoryTotal()
    prefix = HarnessPrefix(inferred, 1, None, FIRST_CALL, False) if inferred else None
    return Window(at, totals=totals, harness=prefix, reported=sum(tokens))


def entry(index: int, compaction: bool) -> Entry:
    from ctxtop.parsers.model import Compaction

    return Entry(index, "user", [], 0, 0, compaction=Compaction("compact_boundary") if compaction else None)


points = st.lists(st.tuples(st.lists(st.integers(0, 5000), min_size=WIDTH, max_size=WIDTH), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=100, deadline=None)
@given(points, st.integers(0, 40), st.data())
def test_a_view_answers_like_a_list_of_points(data, settled, draw):
    settled = min(settled, len(data))
    timeline = Timeline()
    expected = []
    for index, (tokens, compacted) in enumerate(data, start=1):
        point = TimelinePoint(index, tuple(tokens), compacted)
        expected.append(point)
        if index <= settled:
            timeline.add(window_with(index, tokens), entry(index, compacted))
    view = timeline.view(settled, expected[settled:])
    assert list(view) == expected and len(view) == len(expected)
    start = draw.draw(st.integers(0, len(expected) - 1))
    stop = draw.draw(st.integers(start + 1, len(expected)))
    best = view.tallest(start, stop)
    assert expected[best].total == max(p.total for p in expected[start:stop])
    assert best == min(i for i in range(start, stop) if expected[i].total == expected[best].total)  # the first of equals
    assert view.compaction_in(start, stop) == any(p.compaction for p in expected[start:stop])


def test_a_view_keeps_its_length_while_the_timeline_grows_and_reads_a_truncated_point_as_empty():
    timeline = Timeline()
    for index in range(1, 6):
        timeline.add(window_with(index, [index] * WIDTH), entry(index, index == 3))
    view = timeline.view(5)
    timeline.add(window_with(6, [6] * WIDTH), entry(6, False))
    assert len(view) == 5 and view[4].tokens == (5,) * WIDTH
    timeline.truncate(2)  # the messages from 3 on changed: a new view will come
    assert view[4].tokens == (0,) * WIDTH and view.total(4) == 0
    assert not timeline.view(5).compaction_in(0, 5) and len(timeline.view(5)) == 2


def test_a_count_past_four_bytes_widens_the_columns_and_every_point_stays_exact():
    # 4 bytes a value while counts allow (half the memory of a 1 GB log's timeline); a log reporting
    # absurd usage (2^40 reasoning tokens, say) widens them, keeps what came before, and saves and restores.
    huge = [0] * WIDTH
    huge[ROWS.index("reasoning")] = 1 << 40
    timeline = Timeline()
    timeline.add(window_with(1, [7] * WIDTH), entry(1, False))
    timeline.add(window_with(2, huge), entry(2, True))
    timeline.add(window_with(3, [9] * WIDTH), entry(3, False))
    expected = [TimelinePoint(1, (7,) * WIDTH, False), TimelinePoint(2, tuple(huge), True), TimelinePoint(3, (9,) * WIDTH, False)]
    assert list(timeline.view(3)) == expected
    restored = Timeline.from_columns(timeline.columns())
    assert list(restored.view(3)) == expected and restored.view(3).tallest(0, 3) == 1
    small = Timeline()
    small.add(window_with(1, [7] * WIDTH), entry(1, False))
    assert len(small.columns()[1]) == 4 * WIDTH  # 4 bytes a value until one needs more


@pytest.mark.parametrize("log", [p for p in jsonl_logs() if p.suffix == ".jsonl"], ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_a_column_is_as_tall_as_the_window_the_log_reports(log):
    # The chart once drew only the counted text: a Codex window compacted at 81% of its limit peaked at 13%.
    session = Session.open(log)
    view = session.timeline()
    checked = 0
    beyond_at_call = None  # what the last call reported beyond the text it held
    for message in range(1, len(view) + 1):
        point, reported = view[message - 1], session.reported_at(message)
        counted = sum(point.tokens[: len(ROWS) - 2])
        called = session.entries[message - 1].usage is not None
        if called:
            beyond_at_call = max(0, reported - counted) if reported is not None else None
        elif session.entries[message - 1].compaction is not None:
            beyond_at_call = None
        if reported is not None and reported >= counted and called:
            assert point.total == reported, message
            checked += 1
        elif reported is not None and beyond_at_call is not None:
            # After the call, the messages since are added to what it reported: its beyond-the-text part stays
            # (grown by what left the window since it, earlier reasoning dropped at a question: counted with the call).
            assert point.total - counted >= beyond_at_call and point.total >= reported, message
        elif reported is None:
            assert point.total - counted == point.tokens[ROWS.index(INFERRED)]  # the prefix alone, as the header adds it
    if any(e.usage for e in session.entries):
        assert checked


@pytest.mark.parametrize("log", [p for p in jsonl_logs() if p.suffix == ".jsonl"], ids=lambda p: f"{p.parent.name}/{p.name[:40]}")
def test_between_two_calls_a_column_is_nearer_the_next_calls_size(log):
    """At a message after a call (a tool's result, the next question), the window is what the call reported and the
    messages since: measured against the size the next call reports, nearer than the counted text alone was (it
    dropped the system prompt and tools once a big result outgrew the last report)."""
    session = Session.open(log)
    view, entries = session.timeline(), session.entries
    errors, errors_before = [], []
    for message in range(1, len(view) + 1):
        entry = entries[message - 1]
        reported = session.reported_at(message)
        if entry.usage is not None or entry.compaction is not None or reported is None:
            continue
        following = next((e for e in entries[message:] if e.usage is not None or e.compaction is not None), None)
        if following is None or following.usage is None or following.usage.prompt_tokens <= 0:
            continue
        point, target = view[message - 1], following.usage.prompt_tokens
        counted = sum(point.tokens[: len(ROWS) - 2])
        errors.append(abs(point.total - target) / target)
        errors_before.append(abs(max(reported, counted) - target) / target)
    if not errors:
        pytest.skip("no message between two calls")
    mean, mean_before = sum(errors) / len(errors), sum(errors_before) / len(errors_before)
    assert mean <= mean_before + 1e-9, (round(mean, 3), round(mean_before, 3))
    if len(errors) >= 10:  # a real session's worth: within 8% of the next call's size on average (1-6% on the fixtures)
        assert mean <= 0.08, round(mean, 3)


def test_an_implicit_compaction_is_marked_on_the_timeline_as_the_audit_lists_it():
    # The audit (export's compactions, check, `]` in the TUI) finds an implicit compaction at message 10 of this
    # chat: the timeline's ▲ and the HTML chart's mark must be there too, not only at the parsers' markers.
    from ctxtop.context.output.html import chart_columns
    from ctxtop.context.tracker import Tracker

    tracker = Tracker.open(str(DATA / "gemini_model_switch.jsonl"))
    compactions = [c.event.message for c in tracker.audit.compactions]
    assert compactions == [10] and tracker.audit.compactions[0].event.kind == "implicit"
    points = tracker.timeline()
    assert [p.message for p in points if p.compaction] == compactions
    assert points.first_compaction_in(0, len(points)) == 9 and points.compaction_in(9, 10) and not points.compaction_in(0, 9)
    assert [m for m, _, marked in chart_columns(points) if marked] == compactions
