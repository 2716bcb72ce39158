"""Textual app, CLI entry point and file watching: the only layer that touches the terminal."""
