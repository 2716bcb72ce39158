"""``python -m tui`` runs the ctxtop command line."""

from .cli import entry_point

entry_point()
