"""Untrusted log text never reaches the terminal or a Markdown export with control sequences."""

import pytest

from ctxtop.context.sanitize import clean_text, markdown_cell, one_line, quoted, shown_name


@pytest.mark.parametrize(
    "payload, expected",
    [
        ("copy \x1b]52;c;SGVsbG8=\x07me", "copy me"),  # OSC 52 clipboard write
        ("\x1b]0;pwned title\x1b\\ok", "ok"),  # title change ended by ST
        ("a\x1b[2J\x1b[Hb", "ab"),  # clear screen, cursor home
        ("x\x9b31my", "xy"),  # 8-bit CSI
        ("tab\tand\nnewline\x00\x07\x7f", "tab\tand\nnewline"),
        ("left\u202eevil\u2066\u200bright", "leftevilright"),  # bidi override, isolate, zero-width
        ("[bold]literal[/] <|endoftext|>", "[bold]literal[/] <|endoftext|>"),  # markup is just text here
    ],
)
def test_clean_text(payload, expected):
    assert clean_text(payload) == expected


def test_one_line_folds_and_cuts():
    assert one_line("a\n\n  b\tc", 4) == "a b…"


def test_markdown_cell_escapes_table_and_markup():
    assert markdown_cell("a|b [x](y) `c`\x1b[31m") == "a\\|b \\[x\\](y) \\`c\\`"


@pytest.mark.parametrize(("name", "shown"), [
    ("/logs/session.jsonl", "/logs/session.jsonl"),
    ("/logs/ok\x1b]0;PWNED\x07\u202e.jsonl", "/logs/ok.jsonl"),  # a title change and a bidi override, dropped
    ("/logs/caf\udce9.jsonl", "/logs/caf\ufffd.jsonl"),  # os.fsdecode(b"caf\xe9.jsonl"): the byte that is not UTF-8
    ("s3://bucket/a\x85b.jsonl", "s3://bucket/ab.jsonl"),  # a C1 control
])
def test_shown_name(name, shown):
    assert shown_name(name) == shown
    assert shown_name(name).encode("utf-8")  # writable to any UTF-8 output


def test_quoted_drops_control_sequences_instead_of_spelling_them_out():
    assert quoted("Never push to main.\x1b]0;pwned\x07 \u202eevil") == "'Never push to main. evil'"
    assert quoted("don't\nstop") == '"don\'t\\nstop"'  # a quote and a newline, as repr writes them
