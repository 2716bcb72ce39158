"""The Agents pane: the session's sub-agents, each with its own window now; Enter opens one."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.message import Message
from textual.widgets import DataTable

from ctxtop.context.output.redact import redact_text_if
from ctxtop.context.sanitize import one_line
from ctxtop.tui.widgets.cells import count_cell, cut_to_cells, percent_text
from ctxtop.tui.widgets.counts_table import CountsTable
from ctxtop.tui.widgets.empty_note import EmptyNote, show_if_empty

_MESSAGES_WIDTH = 5
EMPTY = "No sub-agents in this session so far."
_WINDOW_WIDTH = 9
# The counts after the name, the most telling first: each shown whole, or left out where the pane is too narrow.
_COUNTS = (("window", "window", _WINDOW_WIDTH), ("% limit", "percent", 7), ("msgs", "messages", _MESSAGES_WIDTH))
_NAME_WIDTH = (8, 18)  # the agent column's least and most cells
# In the room the counts leave: the type ("general-purpose", "compaction") as wide as the longest, up to 20 cells,
# then the task in the rest; a column with less than its least is left out.
_TEXTS = (("type", "kind", (6, 20)), ("task", "task", (8, None)))
_TASK_READ = 1000  # characters of a type or task read at most: wider than any pane


class SubagentsTable(CountsTable):
    """One row per sub-agent transcript, updated in place as the files grow."""

    class Open(Message):
        """The user asked to open a sub-agent in the main view."""

        def __init__(self, agent: dict[str, Any]) -> None:
            super().__init__()
            self.agent = agent

    # The numbers after the name, each whole or not at all: the pane is narrow, and they are what changes.
    NAME = ("id", "agent", _NAME_WIDTH)
    COUNTS = _COUNTS
    TEXTS = _TEXTS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._agents: dict[str, dict[str, Any]] = {}
        self._shown: tuple[dict[str, Any], bool] | None = None  # the last ``show``, to fill the columns again on a resize

    def text_bounds(self) -> list[tuple[int, int | None]]:
        # The type column no wider than its longest type (as shown: masked while redacting): what is left is the task's.
        (least, most), task = super().text_bounds()
        redacting = self._shown is not None and self._shown[1]
        longest = max((cell_len(_shown_text(agent["kind"], redacting)) for agent in self._agents.values()), default=0)
        widest = longest if most is None else min(most, longest)
        return [(least, max(least, widest)), task]

    def refill(self) -> None:
        self._agents.clear()  # (their rows went with the columns)
        if self._shown is not None:
            self.show(*self._shown)

    def show(self, subagents: dict[str, Any], redacting: bool = False) -> None:
        """The snapshot's ``subagents``: a row per transcript file; with none, the note says whether the log
        holds sub-agent records of its own (older Claude Code wrote them inline: counted, not openable)."""
        self._shown = (subagents, redacting)
        agents = subagents["agents"]
        inline = subagents["messages"] - sum(agent["messages"] for agent in agents)
        for note in self.parent.query_children(EmptyNote) if self.parent is not None else ():
            note.update(f"No sub-agent transcripts beside this log; it holds {inline:,} sub-agent messages of its own "
                        f"(est. {subagents['tokens']:,} tokens), counted in the header, kept out of the window, not openable."
                        if inline > 0 else EMPTY)
        with self.app.batch_update():
            for agent in agents:
                key = agent["path"]
                if key not in self.rows:
                    self.add_row(*(Text("") for _ in self.columns), key=key)
                self._agents[key] = agent
                window = agent["window"]
                reported = window["reported_tokens"]
                # ≈: no model call reported yet, so the window is our own count of its text.
                estimated = reported is None
                size = count_cell(window["estimated_tokens"] if estimated else reported, _WINDOW_WIDTH, mark="≈" if estimated else "")
                percent = window["percent"]
                style = "bold red" if percent and percent >= 90 else "yellow" if percent and percent >= 70 else ""
                # Its id is its file's name, its type and task the log's words: all masked while redacting.
                self.update_cell(key, "id", Text(cut_to_cells(_shown_text(agent["id"], redacting), self.name_width)))
                counts = {"messages": count_cell(agent["messages"], _MESSAGES_WIDTH), "window": size,
                          "percent": Text(percent_text(percent) if percent is not None else "—", justify="right", style=style)}
                for _, column, _ in self.counts:
                    self.update_cell(key, column, counts[column])
                texts = {"kind": (_shown_text(agent["kind"], redacting), "dim" if agent["kind"] == "agent" else ""),
                         "task": (_shown_text(agent["description"] or "", redacting), "dim")}
                for column, width in self.text_widths.items():  # the text columns there is room for
                    text, text_style = texts[column]
                    self.update_cell(key, column, Text(cut_to_cells(text, width), style=text_style))
            for gone in set(self._agents) - {a["path"] for a in agents}:
                self.remove_row(gone)
                del self._agents[gone]
            show_if_empty(self)
        self.lay_out()  # a longer type came, or the longest went: the type column and the task's change width

    @on(DataTable.RowSelected)
    def open_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        agent = self._agents.get(event.row_key.value or "")
        if agent is not None:
            self.post_message(self.Open(agent))


def _shown_text(text: str, redacting: bool) -> str:
    """A sub-agent's id, type or task as its column shows it before it is cut to the column: masked while redacting,
    before the cut, since the mask may be longer than what it hides. (Cut first to a width no pane has, so that a
    log's megabyte of task is not masked at each update.)"""
    return redact_text_if(one_line(text, _TASK_READ), redacting)
