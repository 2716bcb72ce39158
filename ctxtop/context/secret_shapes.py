"""The shapes of API keys and tokens, told from text by how they start and what follows.

Below every concern that must know a secret when it sees one: ``output.redact`` masks them, and a rule's facts take
a key whole (``rules.facts``), so that no part of one is ever shown apart from it, where no shape would tell it.
"""

from __future__ import annotations

import re

# Each kind of key or token: how it starts (enough to know one cut short, "sk-ant-…", as ``output.redact`` does), and
# the rest of it. A start of None: no cut of it is told from text (a PEM block runs to its end or the text's).
KEY_SHAPES: list[tuple[str, str | None, str]] = [
    ("private_key", None, r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"),
    ("api_key", r"\bsk-ant-", r"[A-Za-z0-9_\-]{20,}"),
    # (three digits in it, or a digit and a capital: "sk-learn-compat-layer-module-v2" is a package's name; looked
    # for in its first 256 characters or so: unbounded, each "sk-" of a run of them read the run to its end)
    ("api_key", r"\bsk-", r"(?:proj-|svcacct-)?(?=(?:[A-Za-z0-9_\-]{0,256}?\d){3}|(?=[A-Za-z0-9_\-]{0,256}\d)[A-Za-z0-9_\-]{0,256}[A-Z])"
                         r"[A-Za-z0-9_\-]{20,}"),
    ("api_key", r"\b(?:AKIA|ASIA)", r"[0-9A-Z]{16}\b"),
    ("token", r"\bgh[pousr]_", r"[A-Za-z0-9]{30,}\b"),
    ("token", r"\bgithub_pat_", r"[A-Za-z0-9_]{22,}\b"),
    ("token", r"\bxox[abprs]-", r"[A-Za-z0-9\-]{10,}"),
    ("token", r"\bhttps://hooks\.slack\.com/services/", r"[A-Za-z0-9/]{20,}"),
    ("api_key", r"\bAIza", r"[0-9A-Za-z_\-]{35}\b"),
    ("token", r"\beyJ", r"[A-Za-z0-9_\-]{8,2000}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # (a header of 2,000 at most: see sk-)
    ("token", r"(?<=\b[Bb]earer )", r"[A-Za-z0-9._~+/\-]{16,}=*"),
    # (a digit or a base64 sign in it: "Basic configuration" is no credential)
    ("token", r"(?<=\b[Bb]asic )", r"(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{12,}=*"),
    ("api_key", r"\b[srp]k_(?:live|test)_", r"[A-Za-z0-9]{16,}"),  # Stripe
    ("token", r"\bwhsec_", r"[A-Za-z0-9+/=]{20,}"),  # Stripe's webhook secrets
    ("token", r"\bgl(?:pat|ptt|dt|rt|cbt|oas)-", r"[A-Za-z0-9_\-]{20,}"),  # GitLab
    ("token", r"\bhf_", r"[A-Za-z0-9]{30,}"),  # Hugging Face
    ("token", r"\bnpm_", r"[A-Za-z0-9]{36,}"),
    ("api_key", r"\bSG\.", r"[\w-]{16,}\.[\w-]{16,}"),  # SendGrid
    ("api_key", r"\b(?:gsk_|xai-)", r"[A-Za-z0-9]{40,}"),  # Groq, xAI
    ("token", r"\bdop_v1_", r"[a-f0-9]{64}"),  # DigitalOcean
    ("token", r"\bpypi-", r"[A-Za-z0-9_\-]{50,}"),
]
SECRETS = re.compile("|".join(f"(?P<{kind}{n}>{start or ''}{rest})" for n, (kind, start, rest) in enumerate(KEY_SHAPES)))
