"""The window and everything computed from it. Pure: no Textual, no printing."""
