"""Untrusted log text never reaches the terminal or a Markdown export with control sequences."""

import pytest

from ctxtop.context.sanitize import clean_text, markdown_cell, one_line, quoted, shell_word, shown_name


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
    # A title change and a bidi override, spelled out: printable, and naming that file only.
    ("/logs/ok\x1b]0;PWNED\x07\u202e.jsonl", "/logs/ok\\x1b]0;PWNED\\x07\\u202e.jsonl"),
    ("/logs/caf\udce9.jsonl", "/logs/caf\\xe9.jsonl"),  # os.fsdecode(b"caf\xe9.jsonl"): the byte that is not UTF-8
    ("s3://bucket/a\x85b.jsonl", "s3://bucket/a\\u0085b.jsonl"),  # a C1 control
    ("a\\x1b.jsonl", "a\\\\x1b.jsonl"),  # a backslash in the name itself: never taken for an escape
    ("new\nline.jsonl", "new\\x0aline.jsonl"),
])
def test_shown_name(name, shown):
    assert shown_name(name) == shown
    assert shown_name(name).isprintable()  # nothing for a terminal to act on, writable to any UTF-8 output


@pytest.mark.parametrize("name", ["/logs/ok\x1b]0;PWNED\x07\u202e.jsonl", "caf\udce9.jsonl", "it's\nnew.jsonl", "a\\b c.jsonl",
                                  "-rf.jsonl", "plain.jsonl"])
def test_a_shell_word_names_exactly_the_file(name):
    import os
    import shutil
    import subprocess

    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    word = shell_word(shown_name(name))
    assert word.isprintable()
    printed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
    assert printed == os.fsencode(("./" if name.startswith("-") else "") + name)


def test_quoted_drops_control_sequences_instead_of_spelling_them_out():
    assert quoted("Never push to main.\x1b]0;pwned\x07 \u202eevil") == "'Never push to main. evil'"
    assert quoted("don't\nstop") == '"don\'t\\nstop"'  # a quote and a newline, as repr writes them
