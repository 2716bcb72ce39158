"""``python -m ctxtop`` runs the ctxtop command line."""

from ctxtop.tui.cli import entry_point

entry_point()
