"""ctxtop: htop for an AI agent's context window.

Data flows one way: a log file is read by ``ctxtop.parsers`` (bytes in, normalized
entries out), modelled and judged by ``ctxtop.context`` (headless: windows,
accounting, rules, audit, strategies, output), and shown by ``ctxtop.tui`` (the
Textual app and the command line).
"""


def __getattr__(name: str) -> str:
    # ``__version__`` is looked up when asked for (``ctxtop --version``): importlib.metadata costs
    # about 20 ms, a fifth of what `ctxtop hook` may spend before every tool call.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("ctxtop")
        except PackageNotFoundError:  # run from a checkout that was never installed
            return "0+unknown"
    raise AttributeError(f"module 'ctxtop' has no attribute {name!r}")
