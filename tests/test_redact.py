"""--redact: what is masked, and that it reaches every text ctxtop writes."""

from __future__ import annotations

import json

import pytest

from ctxtop.context.output.redact import redact, redact_text
from ctxtop.tui.cli import main

CASES = [
    ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 here", "key [REDACTED:api_key] here"),
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456", "OPENAI_API_KEY=[REDACTED:api_key]"),
    ("aws AKIAIOSFODNN7EXAMPLE", "aws [REDACTED:api_key]"),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [REDACTED:token]"),
    ("Authorization: Bearer abcdef0123456789abcdef", "Authorization: Bearer [REDACTED:token]"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt [REDACTED:token]"),
    ("password=hunter2 and more", "password=[REDACTED:secret] and more"),
    ('{"api_key": "abc123"}', '{"api_key": "[REDACTED:secret]"}'),
    ("mail ops@example.com now", "mail [REDACTED:email] now"),
    ("手机 13800138000 联系", "手机 [REDACTED:phone] 联系"),
    ("call +86 138-0013-8000", "call [REDACTED:phone]"),
    ("call +1 (415) 555-2671", "call [REDACTED:phone]"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[REDACTED:private_key]"),
    ("order PO-0101 total 8000 元", "order PO-0101 total 8000 元"),  # plain business data stays
    ("git sha 1f2e3d4c5b6a79881726354433221100aabbccdd", "git sha 1f2e3d4c5b6a79881726354433221100aabbccdd"),
]


@pytest.mark.parametrize("text, expected", CASES, ids=[c[0][:24] for c in CASES])
def test_redact_text(text, expected):
    assert redact_text(text) == expected


def test_redact_walks_json_values_and_keeps_them_valid():
    value = {"a": ["x@y.io", {"b": "password: 'p'"}], "n": 3, "t": True, "z": None}
    assert redact(value) == {"a": ["[REDACTED:email]", {"b": "password: '[REDACTED:secret]'"}], "n": 3, "t": True, "z": None}


def test_export_check_and_preview_redact_everything_they_write(capsys):
    pin = ["--pin", "Never write to ops@example.com or 13800138000"]
    assert main(["export", "--demo", *pin]) == 0
    assert "13800138000" in capsys.readouterr().out  # without --redact, the log's words as they are
    for argv in (["export"], ["export", "--format", "md"], ["check"], ["check", "--json"], ["preview", "--json"],
                 ["export", "--strategies"]):
        code = main([*argv, "--demo", "--redact", *pin])
        out = capsys.readouterr().out
        assert code in (0, 1), argv
        assert "13800138000" not in out and "ops@example.com" not in out, argv
        assert "REDACTED:phone" in out or argv[0] == "preview", argv
        if "--json" in argv or argv == ["export"]:
            json.loads(out)  # still valid JSON
