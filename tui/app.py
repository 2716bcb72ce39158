"""The ctxtop Textual app."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from context.audit import Audit, run_audit
from context.sanitize import one_line
from context.session import Session
from context.snapshot import build_snapshot

from .errors import USER_ERRORS
from .messages import LoadFailed, SessionLoaded, SnapshotReady
from .widgets.breakdown import Breakdown


class CtxtopApp(App[int]):
    TITLE = "ctxtop"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        # Priority: the category table must not swallow the keys that step through the session.
        Binding("left", "move(-1)", "Prev msg", priority=True),
        Binding("right", "move(1)", "Next msg", priority=True),
        Binding("home", "jump('start')", "First", show=False, priority=True),
        Binding("end", "jump('end')", "Latest", priority=True),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        path: str,
        *,
        log_format: str | None = None,
        encoding: str = "cl100k_base",
        window: int | None = None,
        at: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__()
        self.path = path
        self.log_format = log_format
        self.encoding = encoding
        self.window_override = window
        self.session: Session | None = None
        self.audit: Audit | None = None  # whole-session work: done once per load, not per cursor move
        self.cursor = at
        self.shown_message: int | None = None  # the message whose breakdown is on screen
        self.sub_title = one_line(title or Path(path).name, 60)

    def compose(self) -> ComposeResult:
        yield Static(Text("loading…"), id="header")
        yield Breakdown()
        yield Footer()

    def on_mount(self) -> None:
        self.load_session()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load_session(self) -> None:
        try:
            session = Session.open(self.path, format=self.log_format, encoding=self.encoding, window=self.window_override)
        except USER_ERRORS as exc:
            self.post_message(LoadFailed(str(exc)))
            return
        self.post_message(SessionLoaded(session, run_audit(session, [])))

    def on_session_loaded(self, message: SessionLoaded) -> None:
        self.session = message.session
        self.audit = message.audit
        self.cursor = self.session.clamp(self.cursor)
        self.compute_snapshot(self.cursor)

    def on_load_failed(self, message: LoadFailed) -> None:
        self.exit(return_code=2, message=Text(f"ctxtop: error: {one_line(message.error)}"))

    @work(thread=True, exclusive=True, exit_on_error=False, group="snapshot")
    def compute_snapshot(self, at: int) -> None:
        assert self.session is not None
        self.post_message(SnapshotReady(build_snapshot(self.session, at, audit=self.audit)))

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        snapshot = message.snapshot
        self.shown_message = snapshot["at"]["message"]
        self.query_one(Breakdown).show(snapshot)
        self.query_one("#header", Static).update(header_text(snapshot))

    def action_move(self, step: int) -> None:
        if self.session is None:
            return
        self.cursor = max(1, min(self.session.message_count, (self.cursor or 0) + step))
        self.compute_snapshot(self.cursor)

    def action_jump(self, where: str) -> None:
        if self.session is None:
            return
        self.cursor = 1 if where == "start" else self.session.message_count
        self.compute_snapshot(self.cursor)


def header_text(snapshot: dict) -> Text:
    source, at, window = snapshot["source"], snapshot["at"], snapshot["window"]
    reported = window["reported_tokens"]
    used = reported if reported is not None else window["estimated_tokens"]
    share = 100 * used / window["limit"] if window["limit"] else 0
    text = Text()
    text.append(one_line(Path(source["path"] or "").name, 48), style="bold")
    text.append(f"  {source['format']}  {one_line(source['model'] or 'model?', 32)}\n", style="dim")
    text.append(f"{used:,} / {window['limit']:,} tokens ", style="bold")
    text.append(f"({share:.1f}%)", style="bold red" if share >= 90 else "bold yellow" if share >= 70 else "bold green")
    text.append(f"  reported {reported:,}" if reported is not None else "  reported —", style="dim")
    text.append(f"  estimated {window['estimated_tokens']:,}", style="dim")
    text.append(f"  message {at['message']} / {at['messages']}")
    return text
