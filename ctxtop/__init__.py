"""ctxtop: htop for an AI agent's context window.

Data flows one way: a log file is read by ``ctxtop.parsers`` (bytes in, normalized
entries out), modelled and judged by ``ctxtop.context`` (headless: windows,
accounting, rules, audit, strategies, output), and shown by ``ctxtop.tui`` (the
Textual app and the command line).
"""


def __getattr__(name: str) -> str:
    # ``__version__`` is looked up when asked for (``ctxtop.version``: importlib.metadata is not free).
    if name == "__version__":
        from ctxtop.version import version

        return version()
    raise AttributeError(f"module 'ctxtop' has no attribute {name!r}")
