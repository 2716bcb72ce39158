"""Offline token counting: special-token text is content, counts are cached by content."""

import pytest

from context.tokens import EncodingUnavailable, TokenCounter


def test_special_token_text_is_counted_as_ordinary_text(counter):
    assert counter.count("<|endoftext|>") > 1  # encode() would raise, or count it as 1 special token


def test_counts_are_cached_by_content():
    counter = TokenCounter()
    long_text = "word " * 500
    first = counter.count(long_text)
    assert counter.count("".join(["word "] * 500)) == first
    assert counter.encoded == 1


def test_known_count(counter):
    assert counter.count("hello world") == 2


@pytest.mark.parametrize("name, message", [("nope_base", "unknown encoding"), ("o200k_base", "ctxtop does not download")])
def test_unavailable_encodings_fail_in_one_line(name, message, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: nothing to load offline
    with pytest.raises(EncodingUnavailable, match=message) as info:
        TokenCounter(name)
    assert "\n" not in str(info.value)
