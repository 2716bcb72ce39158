"""Offline token counting: special-token text is content, counts are cached by content."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtop.context.window import tokens as tokens_module
from ctxtop.context.window.tokens import EncodingUnavailable, TokenCounter, load_encoding, token_length


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


ENCODING = load_encoding("cl100k_base")
# Letters, digits, CJK, apostrophes (contractions), punctuation and every kind of blank: where the
# encoding's pre-split is subtle.
_PIECES = st.sampled_from(["a", "Z", "é", "7", "42", "订单", " ", "  ", "\t", "\n", "\r\n", "\n\n", "'s", "'", ".", "!?",
                           "<|endoftext|>", "_", "-", "{", "}", "\u00a0", "😀"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=120).map("".join))
def test_a_long_text_counts_the_same_in_segments_as_whole(text):
    encode = ENCODING.encode_ordinary
    assert token_length(encode, text, segment=3) == len(encode(text))


def test_a_multi_megabyte_output_counts_the_same_in_segments():
    counter = TokenCounter()
    text = "\n".join(f"{i:>5}: order {i} shipped to 仓库 {i % 7}; total ¥{i * 3}.00" for i in range(60_000))
    assert len(text) > 2_000_000
    assert counter._token_length(text) == len(counter._encoding.encode_ordinary(text))


def test_counting_on_both_cores_gives_the_counts_of_one(monkeypatch):
    texts = [f"line {i}: order {i * 7} shipped\n" * (i % 50 + 1) for i in range(300)] + ["", "same", "same"]
    one = [TokenCounter().count(text) for text in texts]
    monkeypatch.setattr("ctxtop.context.window.tokens.PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr("ctxtop.context.window.tokens._WORKERS", 2)
    pools = []
    original = tokens_module._pool
    monkeypatch.setattr(tokens_module, "_pool", lambda: pools.append(1) or original())
    counter = TokenCounter(parallel=True)
    assert counter.count_all(texts) == one
    assert counter.encoded == len({t for t in texts if t})  # each text tokenized once
    assert pools  # on the pool, not one by one
