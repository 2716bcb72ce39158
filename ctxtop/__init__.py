"""ctxtop: htop for an AI agent's context window.

Data flows one way: a log file is read by ``ctxtop.parsers`` (bytes in, normalized
entries out), modelled and judged by ``ctxtop.context`` (headless: windows,
accounting, rules, audit, strategies, output), and shown by ``ctxtop.tui`` (the
Textual app and the command line).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ctxtop")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"
