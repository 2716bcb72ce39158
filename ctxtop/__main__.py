"""``python -m ctxtop`` runs the ctxtop command line."""

from ctxtop.tui.entry import entry_point

entry_point()
