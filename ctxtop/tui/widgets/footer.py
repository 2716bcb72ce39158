"""The footer of key bindings, fitted to its width: what does not fit is left out whole, least useful first.

Textual's footer shows its bindings in order and cuts the line at the terminal's edge, so at 80 columns
the keys at the end — help and quit — were the ones lost. A user who sees only some keys must still
see how to find the others (``?``) and how to leave (``q``), as htop keeps F1 Help and F10 Quit.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.geometry import Size
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # not exported by textual.widgets; its entries are what is fitted


class FittedFooter(Footer):
    """A Footer that hides the entries of lowest ``rank`` (ties: the rightmost) until the rest fit its width,
    in Textual's compact style (keys closer together) below ``roomy_width``."""

    def __init__(self, rank: Callable[[str], int], *, roomy_width: int, **options) -> None:
        super().__init__(**options)
        self._rank = rank  # an entry's action -> how long it stays as the footer narrows (higher: longer)
        self._roomy_width = roomy_width

    async def recompose(self) -> None:
        # The bindings change with the focus: each new set of entries is fitted before it is seen.
        await super().recompose()
        self.fit()

    def on_resize(self, event: events.Resize) -> None:
        # The footer's own new width, not the app's: the app's size, read in its resize handler, was still the old one.
        self.compact = event.size.width < self._roomy_width
        # After the refresh: the compact style changes every entry's width.
        self.call_after_refresh(self.fit)

    def fit(self) -> None:
        width = self.size.width
        if not width:  # not laid out yet; the first resize fits it
            return
        keys = list(self.query(FooterKey))
        for key in keys:
            key.display = True
        needed = {key: self._width_of(key) for key in keys}
        total = sum(needed.values())
        # Least useful first; of equals, the one further right goes first, so the line keeps its order.
        for key in sorted(keys, key=lambda key: (self._rank(key.action), -keys.index(key))):
            if total <= width:
                break
            key.display = False
            total -= needed[key]

    @staticmethod
    def _width_of(key: FooterKey) -> int:
        # What the entry draws (its key and description with their padding) plus its own margin and padding.
        return key.get_content_width(Size(0, 0), Size(0, 0)) + key.styles.gutter.width + key.styles.margin.width
