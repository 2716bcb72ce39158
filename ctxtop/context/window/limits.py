"""Context window sizes by model name, for logs that do not state the limit."""

from __future__ import annotations

DEFAULT_LIMIT = 200_000

# Checked in order; the first prefix that the lower-cased model name starts with wins.
_PREFIX_LIMITS: tuple[tuple[str, int], ...] = (
    ("claude-", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("codex-", 200_000),
    ("gemini-", 1_048_576),
)


def window_limit(model: str | None) -> tuple[int, str]:
    """``(tokens, source)`` for a model name; source says how the number was chosen."""
    if not model:
        return DEFAULT_LIMIT, "default"
    name = model.lower()
    if "[1m]" in name or name.endswith("-1m"):
        return 1_000_000, "model"
    for prefix, limit in _PREFIX_LIMITS:
        if name.startswith(prefix):
            return limit, "model"
    return DEFAULT_LIMIT, "default"
